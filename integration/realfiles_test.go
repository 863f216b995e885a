package integration

import (
	"bytes"
	"encoding/json"
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
	// Both sessions read every file over raw pipes, a few reads in flight
	// each: a file is unchanged when mcpguard's reply line is the
	// server's, byte for byte; only the others are decoded and classified.
	dp, gp := startRaw(t, args...), startGuardedRaw(t, nil, args...)
	dp.initializeWithout()
	gp.initializeWithout()
	var direct, guarded []rawReply
	var wg sync.WaitGroup
	wg.Go(func() { direct = readAllRaw(t, dp, files) })
	wg.Go(func() { guarded = readAllRaw(t, gp, files) })
	wg.Wait()
	if t.Failed() {
		return
	}
	reasons := make([]string, len(files))
	for i := range files {
		d, g := direct[i], guarded[i]
		switch {
		case !d.ok:
			reasons[i] = "unreadable by the server"
		case !g.ok:
			reasons[i] = "refused"
		case bytes.Equal(d.line, g.line):
			reasons[i] = "unchanged"
		case replyText(g.line) != replyText(d.line):
			reasons[i] = differenceReason(replyText(d.line), replyText(g.line))
		default:
			reasons[i] = "unchanged"
		}
	}
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

// rawReply is the reply line to one read; ok when it is a result with one
// text content, not an error.
type rawReply struct {
	line []byte
	ok   bool
}

// readAllRaw reads every file through p's read_text_file (p initialised),
// at most eight reads in flight, and returns the reply to each. Each line
// is decoded once, without its text.
func readAllRaw(t *testing.T, p *rawProc, files []string) []rawReply {
	replies := make([]rawReply, len(files))
	slots, stop := make(chan struct{}, 8), make(chan struct{})
	defer close(stop)
	go func() {
		for i, f := range files {
			select {
			case slots <- struct{}{}:
			case <-stop:
				return
			}
			if err := <-p.send([]byte(callLine(i, "read_text_file", map[string]any{"path": f}))); err != nil {
				return
			}
		}
	}()
	for n := 0; n < len(files); {
		line, err := p.next(60 * time.Second)
		if err != nil {
			t.Errorf("%d of %d replies: %v", n, len(files), err)
			return nil
		}
		var m struct {
			ID     *int    `json:"id"`
			Method *string `json:"method"`
			Result *struct {
				Content []struct {
					Type string `json:"type"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Method != nil {
			continue // a notification or a request of the peer's
		}
		if m.ID == nil || *m.ID < 0 || *m.ID >= len(files) || replies[*m.ID].line != nil {
			t.Errorf("a reply with an unexpected id: %s", truncate(string(line), 300))
			return nil
		}
		r := m.Result
		replies[*m.ID] = rawReply{line, r != nil && !r.IsError && len(r.Content) == 1 && r.Content[0].Type == "text"}
		n++
		<-slots
	}
	return replies
}

// replyText is the text of the one content of a reply line.
func replyText(line []byte) string {
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.Result.Content) != 1 {
		return ""
	}
	return m.Result.Content[0].Text
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
