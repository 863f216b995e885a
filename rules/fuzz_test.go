package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// Known attacks and near misses, shared as seeds.
var flagSeeds = []string{
	"--rootdir", "--rootdir=/tmp", "--ROOTDIR", "--ro", "--r", "--cov_config=x",
	"\u2010\u2010rootdir", "\u2212\u2212require", "\uFF0D\uFF0Drootdir", "--root\u00addir",
	"--\u00adrootdir", "-\u00ad-ro", "---rootdir", "-rootdir", "-D", "-Dx=y", "-vqDx",
	"-v_D", "-_vD", "--D=x", "@args", "\uFF20args", "x --rootdir", `"--root"dir`,
	`\-\-ro`, "-v", "-5", "-", "--", "./a-b", "--count=3", "-k=Dfoo", "--cov_",
	"--manife\u017Ft-path", "\u2014rootdir", "a\x1f-Dx", "--root\xffdir",
	"--root-dir", "--rootDir", "--root_dir=/x", "--covConfig", "--cov-Config", "--node-Opt",
	"--rootdir.0=/x", "-root-dir", "--initScript", "--target_Dir",
}

// FuzzDangerousFlags checks that spellings a tool reads the same as a
// rejected value are rejected too: upper case, '-' for '_', a soft hyphen
// after the leading dashes, U+2010 for an ASCII '-'. And that a Finding never
// repeats the value.
func FuzzDangerousFlags(f *testing.F) {
	for _, s := range flagSeeds {
		f.Add(s)
	}
	d := newTestFlags(f)
	f.Fuzz(func(t *testing.T, v string) {
		fd := d.Check(v)
		if fd == nil {
			return
		}
		reason := fd.Reason
		for _, l := range append(append([]string{}, testLong...), testShort...) {
			reason = strings.ReplaceAll(reason, "flag "+l+" ", "")
		}
		if echoes(v, reason, fd.Remediation) {
			t.Fatalf("finding %+v echoes %q", fd, v)
		}
		if !utf8.ValidString(v) {
			return // the variants below would replace the bad bytes
		}
		lead := len(v) - len(strings.TrimLeft(v, "-"))
		for name, w := range map[string]string{
			"upper":                strings.ToUpper(v),
			"underscore to dash":   strings.ReplaceAll(v, "_", "-"),
			"soft hyphen":          v[:lead] + "\u00ad" + v[lead:],
			"first dash to U+2010": strings.Replace(v, "-", "\u2010", 1),
			"every dash to U+2010": strings.ReplaceAll(v, "-", "\u2010"),
		} {
			if d.Check(w) == nil {
				t.Errorf("%q rejected but its %s variant %q passed", v, name, w)
			}
		}
		if !strings.Contains(fd.Reason, "flag --") {
			return // the variants below are spellings of long flags only
		}
		for name, w := range map[string]string{
			"camelCase to kebab-case": camelToKebab(v),
			"kebab-case to camelCase": kebabToCamel(v),
			"lower":                   strings.ToLower(v),
		} {
			if d.Check(w) == nil {
				t.Errorf("%q rejected but its %s variant %q passed", v, name, w)
			}
		}
	})
}

// camelToKebab writes every ASCII upper-case letter that follows a letter
// or digit as '-' and its lower case (rootDir -> root-dir), as yargs
// expands names.
func camelToKebab(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' && i > 0 && isAlnum(s[i-1]) {
			b.WriteByte('-')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// kebabToCamel drops every '-' or '_' between two ASCII letters or digits
// and upper-cases the letter after it (root-dir -> rootDir).
func kebabToCamel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c == '-' || c == '_') && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1]) {
			continue
		}
		if i > 1 && (s[i-1] == '-' || s[i-1] == '_') && isAlnum(s[i-2]) && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FuzzPathScope holds the two-readings property: for any path the check
// accepts, read as written and percent-decoded once, against every root,
// both the kernel's walk and the walk of the lexically cleaned path end
// inside the root. The walks here are written apart from the check's own:
// filepath.EvalSymlinks on what exists, and a directory that does not exist
// taken as one mkdir -p would create (a ".." that leaves it drops it).
func FuzzPathScope(f *testing.F) {
	tr := newPathTree(f)
	for _, s := range []string{
		"", "sub", "../outside", "sub/../../x", tr.root + "_x", "outlink/secret", "dangling_out",
		"outlink/..", "loop1", "%2e%2e/x", "%252e%252e", `..\x`, `C:\x`, "//h/s", `\\h\s`,
		"file:///etc", "file://localhost" + tr.root + "/sub", "file://h/s", "~", "~/x", "~u",
		"$HOME", "\uFF0E\uFF0E\uFF0Fx", "\u2025/x", "a\x00", "\xff", "sub/./../sub/x", "100%",
		"inlink/../file.txt", "sub/up/root/x", "newdir/../../root_x",
		"missing/../outlink/secret", "missing/../outlink/..", "a/b/../../outlink", "file.txt/../outlink/x", "m/../rel_out",
		"sub/$X/../../outside", "${X}/etc", "e\u0301vil/x", "Kout/x", "\uFE30/x", "Foo$Bar.class",
		"std::vector.md", "backup-2024-01-01T10:00.txt", "~notes.txt", "src/$lib/utils.ts",
		tr.root + "/missing/../outlink", "m/%2e%2e/outlink/x", "sub/../../root/outlink/..",
	} {
		f.Add(s)
	}
	ps, err := NewPathScope([]string{tr.root})
	if err != nil {
		f.Fatal(err)
	}
	inside := func(c string) bool { return c == tr.root || strings.HasPrefix(c, tr.root+"/") }
	f.Fuzz(func(t *testing.T, v string) {
		fd := ps.Check(v)
		if fd != nil {
			if echoes(v, fd.Reason, fd.Remediation) {
				t.Fatalf("finding %+v echoes %q", fd, v)
			}
			return
		}
		if strings.ContainsAny(v, "\x00\\") || !utf8.ValidString(v) {
			t.Fatalf("%q accepted", v)
		}
		for _, r := range []string{v, percentDecode(v)} {
			if strings.HasPrefix(r, "~") || strings.HasPrefix(r, "file:") || strings.Contains(r, "$") {
				continue // judged through expansions the walks here do not model
			}
			abs := r
			if !filepath.IsAbs(r) {
				abs = tr.root + "/" + r
			}
			if got, ok := kernelWalk(abs, 0); !ok || !inside(got) {
				t.Fatalf("%q accepted but the kernel's walk of %q ends at %q (%v)", v, abs, got, ok)
			}
			if got, ok := kernelWalk(filepath.Clean(abs), 0); !ok || !inside(got) {
				t.Fatalf("%q accepted but the walk of the cleaned %q ends at %q (%v)", v, filepath.Clean(abs), got, ok)
			}
		}
	})
}

// kernelWalk is where the kernel resolves the absolute path p, with a
// directory that does not exist taken as created by mkdir -p: a ".." that
// leaves it returns to its parent and walks on. ok is false when the walk
// fails (a loop).
func kernelWalk(p string, depth int) (string, bool) {
	if depth > 64 {
		return "", false
	}
	comps := strings.Split(p, "/")
	for i := 1; i < len(comps); i++ {
		prefix := strings.Join(comps[:i+1], "/")
		if _, err := os.Lstat(prefix); err == nil {
			continue
		}
		// comps[i] does not exist: find the ".." that leaves it, if any.
		level := 0
		for j := i; j < len(comps); j++ {
			switch comps[j] {
			case "", ".":
			case "..":
				if level--; level == 0 {
					rest := strings.Join(append(append([]string{}, comps[:i]...), comps[j+1:]...), "/")
					if rest == "" {
						rest = "/"
					}
					return kernelWalk(rest, depth+1)
				}
			default:
				level++
			}
		}
		parent := strings.Join(comps[:i], "/")
		if parent == "" {
			parent = "/"
		}
		base, err := filepath.EvalSymlinks(parent)
		if err != nil {
			return "", false
		}
		return filepath.Join(base, strings.Join(comps[i:], "/")), true
	}
	res, err := filepath.EvalSymlinks(p)
	return res, err == nil
}

// echoes reports whether a finding's texts repeat the value v. Values
// shorter than 8 bytes are skipped: a fuzzer soon finds short values that
// are words of the fixed prose ("ile:" in "file:"), which is no echo.
func echoes(v string, texts ...string) bool {
	if len(v) < 8 {
		return false
	}
	for _, s := range texts {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// neverKept are code points no value control_chars accepts may hold,
// whatever stands around them: controls, bidi embeddings, overrides and
// isolates, line and paragraph separators, and the invisibles no script
// or emoji sequence uses.
func neverKept(r rune) bool {
	return r < 0x20 || r >= 0x7F && r <= 0x9F ||
		r >= 0x202A && r <= 0x202E || r >= 0x2060 && r <= 0x206F ||
		r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0xFFF0 && r <= 0xFFFB ||
		r >= 0xE0080 && r <= 0xE00FF || r >= 0xE01F0 && r <= 0xE0FFF || r == 0xE0000 || r == 0xE0001
}

func FuzzControlChars(f *testing.F) {
	for _, tc := range controlRejects {
		f.Add(tc.value)
	}
	for _, tc := range controlPasses {
		f.Add(tc.value)
	}
	c := NewControlChars()
	f.Fuzz(func(t *testing.T, v string) {
		accepted := c.Check(v) == nil
		// The contract: one line of valid UTF-8 that text keeps as it is,
		// without the layout characters text keeps in prose.
		want := utf8.ValidString(v) && canon.Text(v) == v && !strings.ContainsAny(v, "\t\n\r\f\u00ad\ufeff")
		if accepted != want {
			t.Fatalf("Check(%+q) accepted %v, want %v", v, accepted, want)
		}
		if !accepted {
			return
		}
		rs := []rune(v)
		for k, r := range rs {
			if neverKept(r) {
				t.Fatalf("%+q accepted with %U", v, r)
			}
			// An invisible code point never stands beside another one
			// outside an emoji sequence, nor between two ASCII letters.
			if canon.Invisible(r) && k > 0 && k+1 < len(rs) && rs[k-1] < 0x80 && rs[k+1] < 0x80 && unicode.IsLetter(rs[k-1]) && unicode.IsLetter(rs[k+1]) {
				t.Fatalf("%+q accepted with %U between ASCII letters", v, r)
			}
		}
	})
}

func FuzzShellMetachars(f *testing.F) {
	for _, tc := range shellRejects {
		f.Add(tc.value)
	}
	for _, tc := range shellPasses {
		f.Add(tc.value)
	}
	c := NewShellMetachars()
	const forbidden = "`$;|&<>\n\r\x00\u0085\u2028\u2029\u037E" +
		"\uFF40\uFF04\uFF1B\uFF5C\uFF06\uFF1C\uFF1E\uFE54\uFE69\uFE60\uFE64\uFE65"
	f.Fuzz(func(t *testing.T, v string) {
		if c.Check(v) != nil {
			return
		}
		if !utf8.ValidString(v) || strings.ContainsAny(v, forbidden) {
			t.Fatalf("%q accepted", v)
		}
		for _, form := range []norm.Form{norm.NFKC, norm.NFKD, norm.NFC} {
			if n := form.String(v); strings.ContainsAny(n, forbidden) {
				t.Fatalf("%q accepted, but its normal form %q holds a metacharacter", v, n)
			}
		}
	})
}

// FuzzFlagsASCIIPath holds the byte-wise word split for ASCII values equal
// to the generic one (rune decoding, unicode.IsSpace), on every ASCII input.
func FuzzFlagsASCIIPath(f *testing.F) {
	for _, s := range []string{"-v --rootdir=/x", "a\v--req\x1cb", `"--rootdir"`, `x'-'-inspect`, "@file", "a\\-\\-require b", "\t\n\f\r --ro", "-Dx -vqPy", "--count=3 ./..."} {
		f.Add(s)
	}
	d, err := NewDangerousFlags([]string{"--rootdir", "--require", "--inspect"}, []string{"-D", "-P"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isASCII(s) {
			return
		}
		got, want := d.checkASCIIWords(s), d.checkWords(s)
		if (got == nil) != (want == nil) || (got != nil && got.Reason != want.Reason) {
			t.Fatalf("%q: ASCII path %+v, generic %+v", s, got, want)
		}
	})
}

// FuzzASCIIScans holds the eight-byte scans equal to their byte-wise
// definitions, at every alignment.
func FuzzASCIIScans(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough", "0123456\x7f", "0123456\x1f89", "\x80", "abcdefgh\xc3\xa9", "        \x00", "~~~~~~~~ ", "abcdefghijklmnop\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for off := 0; off < min(len(s), 9); off++ {
			v := s[off:]
			ascii, run := true, len(v)
			for i := 0; i < len(v); i++ {
				if v[i] >= 0x80 {
					ascii = false
				}
				if (v[i] < 0x20 || v[i] >= 0x7F) && run == len(v) {
					run = i
				}
			}
			if got := isASCII(v); got != ascii {
				t.Fatalf("isASCII(%q) = %v", v, got)
			}
			if got := printableRun(v); got != run {
				t.Fatalf("printableRun(%q) = %d, want %d", v, got, run)
			}
		}
	})
}
