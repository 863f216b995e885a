package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// pathTree builds, under a fresh temp dir:
//
//	root/                     the allowed root
//	root/sub/file.txt
//	root/file.txt
//	root/inlink   -> root/sub           absolute link inside
//	root/rel_in   -> sub                relative link inside
//	root/outlink  -> outside            absolute link out
//	root/rel_out  -> ../outside         relative link out
//	root/dangling_out -> outside/newfile  link out to a file not yet created
//	root/dangling_in  -> root/sub/new     link inside to a file not yet created
//	root/sub/up   -> ../..              climbs to base
//	root/loop1 -> loop2 -> loop1
//	root/home/                          a home directory inside the root
//	root_x/f                            sibling whose name has root as prefix
//	outside/secret
//	realroot/a, realroot/escape -> outside
//	linkroot -> realroot                a root that is itself a symlink
type pathTree struct{ base, root string }

func newPathTree(t testing.TB) pathTree {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := pathTree{base: base, root: filepath.Join(base, "root")}
	for _, d := range []string{"root/sub", "root/home", "root_x", "outside", "realroot/a"} {
		mustDo(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	for _, f := range []string{"root/sub/file.txt", "root/file.txt", "root_x/f", "outside/secret",
		"root/caf\u00e9.txt", "root/o\u0323\u0302", "root/o\u0302\u0323"} {
		mustDo(t, os.WriteFile(filepath.Join(base, f), []byte("x"), 0o644))
	}
	for link, target := range map[string]string{
		"root/inlink":       filepath.Join(base, "root/sub"),
		"root/rel_in":       "sub",
		"root/outlink":      filepath.Join(base, "outside"),
		"root/rel_out":      "../outside",
		"root/dangling_out": filepath.Join(base, "outside/newfile"),
		"root/dangling_in":  filepath.Join(base, "root/sub/new"),
		"root/sub/up":       "../..",
		"root/loop1":        "loop2",
		"root/loop2":        "loop1",
		"realroot/escape":   filepath.Join(base, "outside"),
		"root/\u00e9vil":    filepath.Join(base, "outside"),
		"root/\u212Aout":    filepath.Join(base, "outside"),
		"linkroot":          filepath.Join(base, "realroot"),
	} {
		mustDo(t, os.Symlink(target, filepath.Join(base, link)))
	}
	return tr
}

func mustDo(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPathScope(t *testing.T) {
	tr := newPathTree(t)
	t.Setenv("HOME", filepath.Join(tr.base, "outside"))
	ps, err := NewPathScope([]string{tr.root})
	if err != nil {
		t.Fatal(err)
	}
	root, base := tr.root, tr.base
	for _, tc := range []charCase{
		{"empty", ""},
		{"relative dotdot", "../outside/secret"},
		{"dotdot after a name", "sub/../../outside"},
		{"dotdot at the end", "sub/../.."},
		{"absolute outside", "/etc/passwd"},
		{"absolute dotdot", root + "/../outside/secret"},
		{"absolute deep dotdot", root + "/sub/../../../../../etc/passwd"},
		{"sibling prefix absolute CVE-2025-53110", base + "/root_x/f"},
		{"sibling prefix itself", root + "_x"},
		{"sibling prefix relative", "../root_x/f"},
		{"parent of root", base},
		{"symlink out", "outlink/secret"},
		{"symlink out itself", root + "/outlink"},
		{"relative symlink out, leaf not created", "rel_out/newfile"},
		{"dangling symlink out CVE-2025-53109", "dangling_out"},
		{"symlink climbing out inside sub", "sub/up/outside/secret"},
		{"dotdot after symlink out (kernel reads it outside)", "outlink/.."},
		{"dotdot after symlink out to sibling", "outlink/../root_x/f"},
		{"symlink loop", "loop1"},
		{"NUL", "sub\x00/x"},
		{"invalid utf8", "sub/\xff"},
		{"dollar var", "$HOME/x"},
		{"dollar braces", "${PWD}/../x"},
		{"dollar unset before dotdot (a shell reads sub//../..)", "sub/$MCPGUARD_UNSET_X/../../root_x/f"},
		{"dollar braces unset before dotdot", "sub/${MCPGUARD_UNSET_X}/../../outside"},
		{"dollar braces with an operator", "${MCPGUARD_UNSET_X:-/etc}/passwd"},
		{"dollar paren", "sub/$(id)"},
		{"dollar at the start (a shell reads /etc/passwd)", "$MCPGUARD_UNSET_X/etc/passwd"},
		{"missing component then dotdot through a link out", "missing/../outlink/secret"},
		{"missing components then dotdots through a link out", "a/b/../../outlink/x"},
		{"file used as a directory then dotdot through a link out", "file.txt/../outlink/secret"},
		{"absolute missing then dotdot through a link out", root + "/missing/../outlink"},
		{"missing then dotdot out of the root", "missing/../../outside"},
		{"missing, dotdot, a link out, dotdot (the kernel ends outside)", "missing/../outlink/.."},
		{"NFD spelling of a link out", "e\u0301vil/secret"},
		{"NFD spelling of a link out, absolute", root + "/e\u0301vil"},
		{"plain K for a Kelvin-sign link out", "Kout/secret"},
		{"two entries equal under NFC", "\u1ED9/x"},
		{"fullwidth dots as a component", "sub/\uFF0E\uFF0E/x"},
		{"vertical two dot leader U+FE30", "sub/\uFE30/x"},
		{"one dot leader U+2024 alone", "\u2024/x"},
		{"small full stops", "\uFE52\uFE52/x"},
		{"fullwidth solidus inside a name", "sub\uFF0Fx"},
		{"small reverse solidus", "sub\uFE68x"},
		{"relative climbing above its base and back", "sub/../../root/file.txt"},
		{"relative climbing back through the root's own name", "../root/sub"},
		{"URI with a path", "http:/x"},
		{"dots and a space (Windows)", ".. /outside"},
		{"ellipsis and a space (NFKC ... , Windows)", "\u2026 /x"},
		{"leading space before .. (trimmed by strip)", " ../outside/secret"},
		{"quoted .. (server-filesystem drops the quotes)", "\"../outside/secret"},
		{"trailing newline after an outside path", "/etc/passwd\n"},
		{"tilde plus (a shell's $PWD)", "~+/x"},
		{"tilde minus (a shell's $OLDPWD)", "~-"},
		{"tilde dirs stack", "~+1/x"},
		{"percent dotdot", "%2e%2e/outside/secret"},
		{"percent dotdot upper", "%2E%2E%2Foutside"},
		{"percent slash", "sub%2f..%2f..%2foutside"},
		{"percent double encoded", "%252e%252e/outside"},
		{"percent encoded dollar", "%24HOME"},
		{"percent encoded NUL", "sub/%00x"},
		{"percent encoded backslash", "..%5coutside"},
		{"backslash dotdot", `..\outside`},
		{"backslash after name", `sub\..\..\x`},
		{"drive backslash", `C:\Windows`},
		{"drive slash", "C:/Windows"},
		{"drive relative", "c:x"},
		{"UNC backslash", `\\host\share`},
		{"UNC slash", "//host/share"},
		{"file URI outside", "file:///etc/passwd"},
		{"file URI localhost outside", "file://localhost/etc/passwd"},
		{"file URI one slash", "file:/etc/passwd"},
		{"file URI upper scheme", "FILE:///etc/passwd"},
		{"file URI with host (UNC)", "file://evil/share/x"},
		{"file URI four slashes (UNC)", "file:////evil/share"},
		{"file URI percent dotdot", "file://" + root + "/%2e%2e/outside"},
		{"file URI double encoded", "file://" + root + "/%252e%252e/outside"},
		{"file URI relative", "file:sub/x"},
		{"file URI query", "file://" + root + "/sub?x=1"},
		{"file URI fragment", "file://" + root + "/sub#x"},
		{"file URI drive", "file:///C:/Windows"},
		{"file URI no path", "file://localhost"},
		{"file URI symlink out", "file://" + root + "/outlink/secret"},
		{"other scheme", "http://example.com/x"},
		{"smb scheme", "smb://host/share"},
		{"tilde home outside", "~"},
		{"tilde slash", "~/secret"},
		{"tilde user", "~root/.ssh/id_rsa"},
		{"percent encoded tilde", "%7e/secret"},
		{"fullwidth dots and slash", "\uFF0E\uFF0E\uFF0Foutside"},
		{"two dot leader", "\u2025/outside"},
		{"fullwidth backslash", "sub\uFF3Cx"},
		{"too long", strings.Repeat("a/", 2049)},
	} {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			f := ps.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil, want a rejection", tc.value)
			}
			if f.Code != codes.PathScope || f.Reason == "" || f.Remediation == "" {
				t.Errorf("finding %+v", f)
			}
			assertNoEcho(t, f, tc.value)
			if strings.Contains(f.Reason, base) {
				t.Errorf("reason %q names the tree", f.Reason)
			}
		})
	}
	for _, tc := range []charCase{
		{"relative name", "sub"},
		{"dot slash", "./sub"},
		{"dot", "."},
		{"file", "sub/file.txt"},
		{"the root itself", root},
		{"root with trailing slash", root + "/"},
		{"absolute inside", root + "/sub/file.txt"},
		{"leaf not created", root + "/sub/new.txt"},
		{"intermediate dirs not created", "newdir/deeper/file.go"},
		{"dotdot staying inside", "sub/../file.txt"},
		{"dotdot inside not created", "newdir/../sub"},
		{"symlink inside absolute", "inlink/file.txt"},
		{"symlink inside relative", "rel_in/new"},
		{"dangling symlink inside", "dangling_in"},
		{"dotdot after symlink inside", "inlink/../file.txt"},
		{"file URI inside", "file://" + root + "/sub/file.txt"},
		{"file URI localhost inside", "file://localhost" + root + "/sub"},
		{"file URI one slash inside", "file:" + root + "/sub"},
		{"file URI percent space", "file://" + root + "/a%20b"},
		{"literal percent", "100%"},
		{"percent space", "a%20b"},
		{"names starting with dots", "..foo/.hidden/x..y"},
		{"spaces and dashes", "my dir/a-b c.txt"},
		{"unicode name", "héllo/日本語.txt"},
		{"tilde in the middle", "sub/~backup"},
		{"colon after a slash", "sub/a:b"},
		{"dollar in a Java class name", "Foo$Bar.class"},
		{"dollar in an anonymous class name", "sub/Foo$1.class"},
		{"dollar at the start of a component", "src/$lib/utils.ts"},
		{"dollar inside, unset", "sub/$x"},
		{"dollar before a dot", "a$.txt"},
		{"timestamp with colons", "backup-2024-01-01T10:00.txt"},
		{"double colon", "std::vector.md"},
		{"scheme-like name without a slash", "note:todo.md"},
		{"tilde name that is no user", "~notes.txt"},
		{"Persian name with ZWNJ", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.txt"},
		{"NFD spelling of an existing NFC file", "cafe\u0301.txt"},
		{"NFD spelling of a name not created", "sub/nai\u0308ve.txt"},
		{"missing then dotdot staying inside", "missing/../sub/file.txt"},
		{"ellipsis in a name", "\u2026.txt/x"},
		{"dots inside a name", "a...b"},
		{"Go's package wildcard", "./..."},
		{"ellipsis alone (NFKC ...)", "\u2026/x"},
		{"trailing space in a name", "notes .txt"},
		{"fullwidth letters", "\uFF21\uFF22.txt"},
	} {
		t.Run("passes/"+tc.name, func(t *testing.T) {
			if f := ps.Check(tc.value); f != nil {
				t.Fatalf("Check(%q) = %+v, want nil", tc.value, f)
			}
		})
	}
}

// ~ expands with the home directory of this process, and a server that
// does not expand it reads it as a name under the first root: both pass
// when home is inside a root.
func TestPathScopeTildeInsideHome(t *testing.T) {
	tr := newPathTree(t)
	t.Setenv("HOME", filepath.Join(tr.root, "home"))
	ps, err := NewPathScope([]string{tr.root})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"~", "~/notes.txt", "~/new/dir"} {
		if f := ps.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
	if ps.Check("~/../../outside") == nil {
		t.Error("~/../../outside passed")
	}
}

func TestPathScopeSymlinkRoot(t *testing.T) {
	tr := newPathTree(t)
	link, real := filepath.Join(tr.base, "linkroot"), filepath.Join(tr.base, "realroot")
	ps, err := NewPathScope([]string{link})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{link + "/a", real + "/a", "a", "a/new.txt", link} {
		if f := ps.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
	for _, v := range []string{"escape/secret", link + "/escape", link + "/../outside", real + "_x", "../realroot/escape"} {
		if ps.Check(v) == nil {
			t.Errorf("Check(%q) passed", v)
		}
	}
}

func TestPathScopeSeveralRoots(t *testing.T) {
	tr := newPathTree(t)
	ps, err := NewPathScope([]string{tr.root, filepath.Join(tr.base, "outside")})
	if err != nil {
		t.Fatal(err)
	}
	// Relative paths are read against every root.
	for _, v := range []string{"outlink/secret", tr.base + "/outside/new", "secret", "new/file.txt"} {
		if f := ps.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
	for _, v := range []string{"../root_x/f", tr.base + "/outside_x", "../realroot", "../outside/secret"} {
		if ps.Check(v) == nil {
			t.Errorf("Check(%q) passed", v)
		}
	}
}

func TestPathScopeSlashRoot(t *testing.T) {
	ps, err := NewPathScope([]string{"/"})
	if err != nil {
		t.Fatal(err)
	}
	if f := ps.Check("/etc/passwd"); f != nil {
		t.Errorf("/etc/passwd under /: %+v", f)
	}
	for _, v := range []string{"//host/share", `C:\x`, "${HOME:-x}", "a\x00"} {
		if ps.Check(v) == nil {
			t.Errorf("Check(%q) passed under /", v)
		}
	}
}

func TestNewPathScopeErrors(t *testing.T) {
	for _, roots := range [][]string{nil, {}, {""}, {"relative"}, {"./x"}, {"/a\x00b"}, {"/ok", "rel"}, {"/a\xff"}} {
		if _, err := NewPathScope(roots); err == nil {
			t.Errorf("NewPathScope(%q): no error", roots)
		}
	}
	if _, err := NewPathScope([]string{"/does/not/exist/yet"}); err != nil {
		t.Errorf("a root that does not exist yet: %v", err)
	}
}

// A relative path is judged against every extra base too: the client's
// roots, which server-filesystem reads relative paths against.
func TestPathScopeCheckFromBases(t *testing.T) {
	tr := newPathTree(t)
	ps, err := NewPathScope([]string{tr.root})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, os.Symlink(filepath.Join(tr.base, "outside"), filepath.Join(tr.root, "sub", "subout")))
	if f := ps.Check("subout/secret"); f != nil {
		t.Fatalf("subout/secret does not exist under the root itself: %+v", f)
	}
	if ps.CheckFrom("subout/secret", []string{filepath.Join(tr.root, "sub")}) == nil {
		t.Error("subout/secret read from the client's root sub/ leads out, and passed")
	}
	if f := ps.CheckFrom("file.txt", []string{filepath.Join(tr.root, "sub")}); f != nil {
		t.Errorf("file.txt from sub/: %+v", f)
	}
	if !ps.Contains(filepath.Join(tr.root, "sub")) || ps.Contains(filepath.Join(tr.base, "outside")) || ps.Contains(filepath.Join(tr.root, "outlink")) {
		t.Error("Contains")
	}
}
