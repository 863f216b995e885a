package integration

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Real files come back as they were: a deterministic sample of real text
// files (Go's own sources and docs, the npm fixtures' packages) is read
// through the real server-filesystem directly and through mcpguard under
// the baseline policy, and every difference is classified by its reason.
// A file may change only where it holds a credential or text-hiding
// characters; a file replaced whole is a failure, and so is a difference
// no reason explains.
//
// REALFILES=N reads N files instead of the CI sample (0 or "all": every
// file); REALFILES_ROOTS adds trees (a list like PATH).
func TestRealFilesComeBackUnchanged(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	var roots []string
	for _, r := range append([]string{filepath.Join(runtime.GOROOT(), "src"), filepath.Join(moduleRoot, "integration", "node_modules")},
		filepath.SplitList(os.Getenv("REALFILES_ROOTS"))...) {
		if r == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			roots = append(roots, real)
		}
	}
	want := 1500
	if v := os.Getenv("REALFILES"); v != "" {
		if v == "all" {
			v = "0"
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("REALFILES=%q: want a number or all", v)
		}
		want = n
	}
	files := sampleTextFiles(t, roots, want)
	if len(files) < min(want, 500) && want != 0 {
		t.Fatalf("found only %d text files under %v", len(files), roots)
	}
	args := append([]string{bin}, roots...)
	direct := connectDirect(t, args...)
	guarded := connectGuarded(t, nil, args...)
	// Reads go four at a time on each session (the client multiplexes
	// them); each file's verdict is kept in its slot, so the counts and
	// examples are those of a serial run.
	reasons := make([]string, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				d, okD := readText(direct, files[i])
				if !okD {
					reasons[i] = "unreadable by the server"
					continue
				}
				g, okG := readText(guarded, files[i])
				switch {
				case !okG:
					reasons[i] = "refused"
				case g != d:
					reasons[i] = differenceReason(d, g)
				default:
					reasons[i] = "unchanged"
				}
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	counts := map[string]int{}
	examples := map[string][]string{}
	for i, reason := range reasons {
		counts[reason]++
		if reason != "unchanged" && reason != "unreadable by the server" && len(examples[reason]) < 5 {
			examples[reason] = append(examples[reason], files[i])
		}
	}
	var names []string
	for k := range counts {
		names = append(names, k)
	}
	sort.Strings(names)
	var report strings.Builder
	fmt.Fprintf(&report, "%d files read direct and guarded:\n", len(files))
	for _, k := range names {
		fmt.Fprintf(&report, "  %-28s %6d  %s\n", k, counts[k], strings.Join(examples[k], " "))
	}
	t.Log(report.String())
	for _, bad := range []string{"whole file replaced", "unexplained", "refused"} {
		if counts[bad] > 0 {
			t.Errorf("%d files %s: %v", counts[bad], bad, examples[bad])
		}
	}
}

// differenceReason names why g, what mcpguard passed, differs from d,
// what the server sent.
func differenceReason(d, g string) string {
	switch {
	case strings.HasPrefix(g, "[REDACTED:") && strings.HasSuffix(g, "]") && strings.Count(g, "[") == 1,
		strings.HasPrefix(g, "[content removed:"):
		return "whole file replaced"
	case strings.Contains(g, "[REDACTED:too-dense-to-scan]"):
		return "dense region redacted"
	case strings.Contains(g, "[REDACTED:"):
		return "credential redacted"
	case strings.Contains(g, "[image removed:"):
		return "image removed"
	}
	removed, ok := deletedRunes(d, g)
	if !ok {
		return "unexplained"
	}
	if strings.ContainsRune(removed, 0x1b) {
		return "escape sequence removed"
	}
	for _, r := range removed {
		if r == '\f' {
			return "form feed removed"
		}
	}
	for _, r := range removed {
		if !unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Cc, r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Co, r) {
			return "unexplained"
		}
	}
	return "format or control chars removed"
}

// deletedRunes returns what d has and g lacks when g is d with some runes
// deleted (escape sequences count whole).
func deletedRunes(d, g string) (string, bool) {
	var out strings.Builder
	i := 0
	for j := 0; j < len(d); {
		r, n := utf8.DecodeRuneInString(d[j:])
		if i < len(g) && strings.HasPrefix(g[i:], d[j:j+n]) {
			i, j = i+n, j+n
			continue
		}
		out.WriteRune(r)
		j += n
	}
	return out.String(), i == len(g)
}

// readText reads a file through the server's read_text_file.
func readText(cs *mcp.ClientSession, path string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": path}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		return "", false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	return tc.Text, true
}

// sampleTextFiles picks about n UTF-8 text files (no NUL, at most 256 KiB)
// under roots, the same ones on every run: a file is taken when the hash
// of its path relative to its root falls in the sample's share. n 0 takes
// every file.
func sampleTextFiles(t *testing.T, roots []string, n int) []string {
	type cand struct {
		path string
		h    uint32
	}
	var all []cand
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if name := d.Name(); name == ".bin" || name == "testdata" && strings.Contains(p, "/vendor/") {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			h := fnv.New32a()
			h.Write([]byte(rel))
			all = append(all, cand{p, h.Sum32()})
			return nil
		})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].h < all[j].h || all[i].h == all[j].h && all[i].path < all[j].path })
	var out []string
	for _, c := range all {
		if n > 0 && len(out) >= n {
			break
		}
		b, err := os.ReadFile(c.path)
		if err != nil || len(b) == 0 || len(b) > 256<<10 || !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
			continue
		}
		out = append(out, c.path)
	}
	t.Logf("sampled %d of %d files under %v", len(out), len(all), roots)
	return out
}
