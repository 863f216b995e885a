package rules

import (
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// The coverctl list of the policy reference's example.
var (
	testLong  = []string{"--rootdir", "--cov-config", "--init-script", "--require", "--node-options", "--manifest-path", "--target-dir", "--inspect", "--experimental-loader"}
	testShort = []string{"-D", "-I", "-P"}
)

func newTestFlags(t testing.TB) *DangerousFlags {
	t.Helper()
	d, err := NewDangerousFlags(testLong, testShort)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDangerousFlagsRejects(t *testing.T) {
	d := newTestFlags(t)
	for _, tc := range []struct {
		name, value, listed string // listed: the flag the Reason must name; "" for a response file
	}{
		{"exact", "--rootdir", "--rootdir"},
		{"with value", "--rootdir=/tmp", "--rootdir"},
		{"upper case", "--ROOTDIR=/tmp", "--rootdir"},
		{"mixed case", "--RootDir", "--rootdir"},
		{"abbreviated", "--root", "--rootdir"},
		{"abbreviated two letters", "--ro", "--rootdir"},
		{"abbreviated with value", "--root=/tmp", "--rootdir"},
		{"underscore for dash", "--cov_config=x", "--cov-config"},
		{"underscore abbreviated", "--cov_c", "--cov-config"},
		{"three dashes", "---rootdir", "--rootdir"},
		{"single dash long", "-rootdir", "--rootdir"},
		{"single dash long with value", "-inspect=0.0.0.0:9229", "--inspect"},
		{"hyphen U+2010", "\u2010\u2010rootdir=/tmp", "--rootdir"},
		{"non-breaking hyphen U+2011", "\u2011\u2011rootdir", "--rootdir"},
		{"en dash U+2013", "\u2013\u2013rootdir", "--rootdir"},
		{"em dash U+2014 single", "\u2014rootdir", "--rootdir"},
		{"minus sign U+2212", "\u2212\u2212require=evil", "--require"},
		{"small hyphen-minus U+FE63", "\uFE63\uFE63rootdir", "--rootdir"},
		{"small em dash U+FE58", "\uFE58\uFE58rootdir", "--rootdir"},
		{"fullwidth hyphen-minus U+FF0D", "\uFF0D\uFF0Drootdir", "--rootdir"},
		{"unicode dash inside name", "--cov\u2010config", "--cov-config"},
		{"soft hyphen inside name", "--root\u00addir=/tmp", "--rootdir"},
		{"soft hyphen after dashes", "--\u00adrootdir", "--rootdir"},
		{"soft hyphen between dashes", "-\u00ad-rootdir", "--rootdir"},
		{"zero width space", "--root\u200bdir", "--rootdir"},
		{"bidi override", "--\u202erootdir", "--rootdir"},
		{"fullwidth letters", "--\uFF52\uFF4F\uFF4F\uFF54", "--rootdir"},
		{"long s folds to s", "--manife\u017Ft-path", "--manifest-path"},
		{"dotted capital I folds to i", "--\u0130nspect", "--inspect"},
		{"dotless i folds to i", "--\u0131nspect", "--inspect"},
		{"short prefix bare", "-D", "-D"},
		{"short prefix attached", "-Dfoo=bar", "-D"},
		{"short prefix equals", "-D=x", "-D"},
		{"short prefix I", "-I/evil/include", "-I"},
		{"short in cluster", "-vqDx", "-D"},
		{"short at end of cluster", "-vqP", "-P"},
		{"short fullwidth letter", "-\uFF24x", "-D"},
		{"short with unicode dash", "\u2010Dx", "-D"},
		{"short Go-flag double dash", "--D=x", "-D"},
		{"short Go-flag double dash bare", "--P", "-P"},
		{"response file", "@args.txt", ""},
		{"response file fullwidth at", "\uFF20args.txt", ""},
		{"response file small at", "\uFE6Bargs", ""},
		{"response file after soft hyphen", "\u00ad@args", ""},
		{"second word", "tests/ --rootdir=/tmp", "--rootdir"},
		{"after tab", "x\t--rootdir", "--rootdir"},
		{"after ideographic space", "x\u3000--rootdir", "--rootdir"},
		{"after information separator", "x\x1f--ro", "--rootdir"},
		{"second word short", "tests -Dx", "-D"},
		{"second word response file", "tests @args", ""},
		{"double quoted", `"--rootdir=/tmp"`, "--rootdir"},
		{"quotes inside", `--root"dir"`, "--rootdir"},
		{"single quotes inside", `-'-'rootdir`, "--rootdir"},
		{"backslash escaped", `\-\-rootdir`, "--rootdir"},
		{"quoted short", `-"D"x`, "-D"},
		{"fullwidth quotes", "\uFF02--rootdir\uFF02", "--rootdir"},
		{"invalid utf8", "--root\xffdir", ""},
		{"inspect brk abbreviation", "--insp", "--inspect"},
		{"experimental loader", "--EXPERIMENTAL_LOADER=./x.mjs", "--experimental-loader"},
		{"kebab of a flat name", "--root-dir=/tmp", "--rootdir"},
		{"snake of a flat name", "--root_dir", "--rootdir"},
		{"camel of a kebab name", "--covConfig=x", "--cov-config"},
		{"camel of a kebab name, abbreviated", "--nodeOpt", "--node-options"},
		{"flat of a kebab name", "--nodeoptions", "--node-options"},
		{"kebab with upper case", "--ROOT-DIR", "--rootdir"},
		{"dashes everywhere", "--r-o-o-t-d-i-r", "--rootdir"},
		{"single dash kebab", "-root-dir=/tmp", "--rootdir"},
		{"yargs dot notation", "--rootdir.x=/tmp", "--rootdir"},
		{"yargs dot notation kebab", "--root-dir.0", "--rootdir"},
		{"single dash dot notation", "-rootdir.x=/tmp", "--rootdir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := d.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil, want a rejection", tc.value)
			}
			if f.Code != codes.DangerousFlag {
				t.Errorf("code %q", f.Code)
			}
			if tc.listed != "" && !strings.Contains(f.Reason, "flag "+tc.listed+" ") {
				t.Errorf("reason %q does not name %s", f.Reason, tc.listed)
			}
			if f.Remediation == "" {
				t.Error("no remediation")
			}
			assertNoEcho(t, f, tc.value, tc.listed)
		})
	}
}

func TestDangerousFlagsPasses(t *testing.T) {
	d := newTestFlags(t)
	for _, tc := range []struct{ name, value string }{
		{"verbose short", "-v"},
		{"quiet cluster without listed", "-vq"},
		{"count", "--count=3"},
		{"verbose long", "--verbose"},
		{"one letter abbreviation", "--r"},
		{"one letter abbreviation unicode dash", "\u2010\u2010r"},
		{"plain word", "tests"},
		{"negative number", "-5"},
		{"negative float", "-1.5e3"},
		{"lone dash", "-"},
		{"double dash", "--"},
		{"relative path with dash", "./a-b"},
		{"path", "tests/unit/test_x.py::TestA"},
		{"lower case short is another flag", "-d"},
		{"lower case short cluster", "-vqdx"},
		{"unlisted long", "--maxfail=2"},
		{"longer than listed", "--rootdirs"},
		{"not a prefix", "--rot"},
		{"underscores are not dashes", "__rootdir"},
		{"email", "user@example.com"},
		{"value after short option", "-k=Dfoo"},
		{"empty", ""},
		{"keyword expression", "-k test_a or test_b"},
		{"emoji", "✓ done"},
		{"go test run", "-run=TestFoo"},
		{"kebab of another flag", "--root-count=3"},
		{"dot notation of another flag", "--maxfail.x=2"},
		{"dotted path", "-./rootdir"},
		{"unicode word", "héllo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if f := d.Check(tc.value); f != nil {
				t.Fatalf("Check(%q) = %+v, want nil", tc.value, f)
			}
		})
	}
}

func TestNewDangerousFlagsRejectsMalformedEntries(t *testing.T) {
	for _, tc := range []struct {
		name        string
		long, short []string
	}{
		{"long without dashes", []string{"rootdir"}, nil},
		{"long with one dash", []string{"-rootdir"}, nil},
		{"long one letter", []string{"--r"}, nil},
		{"long bare dashes", []string{"--"}, nil},
		{"long three dashes", []string{"---rootdir"}, nil},
		{"long with value", []string{"--rootdir=x"}, nil},
		{"long with space", []string{"--root dir"}, nil},
		{"long non-ascii", []string{"--r\u00f6ot"}, nil},
		{"short without dash", nil, []string{"D"}},
		{"short bare dash", nil, []string{"-"}},
		{"short double dash", nil, []string{"--D"}},
		{"short with space", nil, []string{"-D x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewDangerousFlags(tc.long, tc.short); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := NewDangerousFlags([]string{"--cov.config", "--v8"}, []string{"-XX:", "-Xss"}); err != nil {
		t.Fatalf("well-formed entries: %v", err)
	}
}

// A flag listed in camelCase (as jest's --help spells them) is refused in
// every spelling yargs reads as it, and its kebab-case neighbours pass.
func TestDangerousFlagsCamelCaseListed(t *testing.T) {
	d, err := NewDangerousFlags([]string{"--rootDir", "--setupFilesAfterEnv", "--projects"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.WithoutAbbreviations()
	for _, v := range []string{"--rootDir", "--root-dir", "--root_dir", "--ROOTDIR", "--rootdir=/x",
		"--setup-files-after-env=x", "--setup_files_after_env", "--SetupFilesAfterEnv",
		"--projects.0=/tmp", "--projects", "-root-dir", "--root-Dir"} {
		if d.Check(v) == nil {
			t.Errorf("%q passed", v)
		}
	}
	for _, v := range []string{"--setupFiles", "--setup-files", "--root", "--selectProjects=a", "--project", "--roots"} {
		if f := d.Check(v); f != nil {
			t.Errorf("%q refused: %s", v, f.Reason)
		}
	}
	if _, err := NewDangerousFlags([]string{"--a-"}, nil); err == nil {
		t.Error("--a- (one letter once dashes are dropped) compiled")
	}
}

// A multi-character short prefix matches at the start only.
func TestDangerousFlagsLongShortPrefix(t *testing.T) {
	d, err := NewDangerousFlags(nil, []string{"-XX:"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Check("-XX:+UnlockDiagnosticVMOptions") == nil {
		t.Error("-XX: prefix passed")
	}
	if f := d.Check("-Xmx1g"); f != nil {
		t.Errorf("-Xmx1g rejected: %v", f)
	}
	if d.Check("@x") == nil {
		t.Error("response file passed with an empty long list")
	}
}

// assertNoEcho fails if the Finding repeats the value. Policy text (a
// listed flag, which an abbreviation is a prefix of) is cut from the Finding
// first; values shorter than four bytes are too short to tell.
func assertNoEcho(t *testing.T, f *Finding, value string, policyText ...string) {
	t.Helper()
	if len(value) < 4 {
		return
	}
	for _, s := range []string{f.Reason, f.Remediation} {
		for _, p := range policyText {
			if p != "" {
				s = strings.ReplaceAll(s, p, "")
			}
		}
		if strings.Contains(s, value) {
			t.Errorf("finding %q echoes the value %q", s, value)
		}
	}
}

// TestDangerousFlagsWithoutAbbreviations: for tools that do not abbreviate,
// the whole flag is still refused in every spelling, and only the benign
// flags it extends pass.
func TestDangerousFlagsWithoutAbbreviations(t *testing.T) {
	d, err := NewDangerousFlags([]string{"--coverprofile", "--exec"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.WithoutAbbreviations()
	for _, v := range []string{"--coverprofile", "-coverprofile=x", "--COVERPROFILE", "\u2014coverprofile", "-v --exec=/bin/sh", "--ex\u00adec"} {
		if d.Check(v) == nil {
			t.Errorf("%q passed", v)
		}
	}
	for _, v := range []string{"--cover-profile", "-coverProfile=x", "--exec.x=1"} {
		if d.Check(v) == nil {
			t.Errorf("%q passed", v)
		}
	}
	for _, v := range []string{"-cover", "--cover", "--coverp", "--ex", "-exe", "--count=3", "--cover.x", "--cover-p"} {
		if f := d.Check(v); f != nil {
			t.Errorf("%q refused: %s", v, f.Reason)
		}
	}
}

// TestDangerousFlagsValueShorts: past a short option that takes a value,
// a cluster is that value (pytest -rfEp is -r fEp), before it the letters
// are still options.
func TestDangerousFlagsValueShorts(t *testing.T) {
	d, err := NewDangerousFlags(nil, []string{"-p", "-c"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Check("-rfEp") == nil {
		t.Fatal("without value shorts, -rfEp passed")
	}
	if err := d.WithValueShorts([]string{"-r", "-k", "-m"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"-rfEp", "-rA", "-vrp", "-kpc", "-mc"} {
		if f := d.Check(v); f != nil {
			t.Errorf("%q refused: %s", v, f.Reason)
		}
	}
	for _, v := range []string{"-vp", "-xpfoo", "-p", "-pno:cacheprovider", "-vcr", "-c=x", "--p"} {
		if d.Check(v) == nil {
			t.Errorf("%q passed", v)
		}
	}
	for _, bad := range []string{"r", "-rr", "--r", "-_"} {
		if err := d.WithValueShorts([]string{bad}); err == nil {
			t.Errorf("value short %q accepted", bad)
		}
	}
}
