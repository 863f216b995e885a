package integration

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tests of the shipped runner policies (policies/jest.yaml,
// policies/go-test.yaml) in front of the real runners: runnerserver runs
// jest 30.5.2 (integration/node_modules) or go test with testArgs as argv.
// Each hostile call would run the attacker's code, which writes a marker
// file; the direct runs prove it does, the guarded runs that mcpguard
// refuses the call and no marker appears. Ordinary test filters (names with
// spaces and brackets, regexps) pass and the runner runs them.

var runnerServer = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "runnerserver")
	if out, err := goBuild(bin, "./integration/runnerserver"); err != nil {
		return "", &buildError{err: err, out: out}
	}
	return bin, nil
})

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// runnerProject is a project and, beside it, the attacker's directory.
type runnerProject struct {
	proj, evil, markers string
}

func newRunnerProject(t *testing.T) *runnerProject {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &runnerProject{proj: filepath.Join(base, "proj"), evil: filepath.Join(base, "evil"), markers: filepath.Join(base, "markers")}
	for _, d := range []string{p.proj, p.evil, p.markers} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// marker is the path the attacker's code named name writes.
func (p *runnerProject) marker(name string) string { return filepath.Join(p.markers, name) }

func (p *runnerProject) markersWritten(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(p.markers)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// runnerArgv is the runnerserver command line for the project.
func runnerArgv(t *testing.T, p *runnerProject, runner string) []string {
	t.Helper()
	bin, err := runnerServer()
	if err != nil {
		t.Fatalf("building runnerserver: %v", err)
	}
	argv := []string{bin, "-runner", runner, "-dir", p.proj}
	if runner == "jest" {
		argv = append(argv, "-jest", filepath.Join(npmBinDir(t), "jest"))
	}
	return argv
}

// npmBinDir is integration/node_modules/.bin, failing the test when the
// npm packages are not installed.
func npmBinDir(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(nodeBin, "jest")); err != nil {
		t.Fatalf("jest is not installed (run npm ci --prefix integration): %v", err)
	}
	return nodeBin
}

// runnerEnv is the environment both the guarded and the direct server run
// with: ${PWD} of the policies is the project, and go test uses the local
// toolchain without GOFLAGS from outside.
func runnerEnv(p *runnerProject) []string {
	return []string{"PWD=" + p.proj, "GOFLAGS=", "GOTOOLCHAIN=local", "GOWORK=off"}
}

// runTests calls run_tests and returns the result's text.
func runTests(t *testing.T, cs *mcp.ClientSession, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_tests", Arguments: map[string]any{"testArgs": args}})
	if err != nil {
		t.Fatalf("run_tests %q: %v", args, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError
}

// mustPass runs args and fails unless the runner ran and passed.
func mustPass(t *testing.T, cs *mcp.ClientSession, want string, args ...string) {
	t.Helper()
	text, isErr := runTests(t, cs, args...)
	if isErr || !strings.HasPrefix(text, "exit=0\n") || !strings.Contains(text, want) {
		t.Errorf("run_tests %q: want a passing run with %q, got %s", args, want, truncate(text, 3000))
	}
}

func js(s string) string { return strconv.Quote(s) }

func TestRunnerPolicyJest(t *testing.T) {
	t.Parallel()
	p := newRunnerProject(t)
	writeFiles(t, p.proj, map[string]string{
		"package.json": `{"name": "proj", "private": true}`,
		"app.test.js": `test('renders <App />', () => { expect(1 + 1).toBe(2); });
test('add', () => { expect(2 + 3).toBe(5); });
test('subtract', () => { expect(5 - 3).toBe(2); });
`,
	})
	// The attacker's code: every module writes its own marker when loaded.
	evilModule := func(name, export string) string {
		return "require('fs').writeFileSync(" + js(p.marker(name)) + ", 'ran');\nmodule.exports = " + export + ";\n"
	}
	writeFiles(t, p.evil, map[string]string{
		"setup.js":       evilModule("globalSetup", "async () => {}"),
		"after-env.js":   evilModule("setupFilesAfterEnv", "{}"),
		"serializer.js":  evilModule("snapshotSerializers", "{test: () => false, serialize: () => ''}"),
		"prettier.js":    evilModule("prettierPath", "{}"),
		"runner.js":      evilModule("testRunner", "async () => ({})"),
		"config.js":      evilModule("config", "{rootDir: "+js(p.evil)+"}"),
		"jest.config.js": evilModule("projects", "{}"),
		"evil.test.js":   "require('fs').writeFileSync(" + js(p.marker("rootDir")) + ", 'ran');\ntest('x', () => {});\n",
	})
	env := runnerEnv(p)
	argv := runnerArgv(t, p, "jest")

	// Direct, the runner runs the attacker's code: the markers prove the
	// hostile arguments are real attacks (yargs reads kebab-case and dot
	// notation).
	direct := connect(t, nil, withEnv(argv, env...)...)
	for _, args := range [][]string{
		{"--global-setup=" + filepath.Join(p.evil, "setup.js")},
		{"--root-dir=" + p.evil},
		{"--projects", p.evil},
	} {
		runTests(t, direct, args...)
	}
	got := p.markersWritten(t)
	if strings.Join(got, ",") != "globalSetup,projects,rootDir" {
		t.Fatalf("direct runs wrote markers %q, want globalSetup, projects and rootDir: the hostile arguments are no attack on this jest", got)
	}
	for _, m := range got {
		os.Remove(p.marker(m))
	}

	guarded := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Policy: shippedPolicy("jest")}, argv...), env...)...)
	for _, args := range [][]string{
		{"--projects", p.evil},
		{"--projects.0=" + p.evil},
		{"--snapshotSerializers=" + filepath.Join(p.evil, "serializer.js")},
		{"--snapshot-serializers", filepath.Join(p.evil, "serializer.js")},
		{"--prettierPath=" + filepath.Join(p.evil, "prettier.js")},
		{"--prettier-path", filepath.Join(p.evil, "prettier.js")},
		{"--globalSetup", filepath.Join(p.evil, "setup.js")},
		{"--global-setup=" + filepath.Join(p.evil, "setup.js")},
		{"--testRunner=" + filepath.Join(p.evil, "runner.js")},
		{"--test-runner", filepath.Join(p.evil, "runner.js")},
		{"--setupFilesAfterEnv", filepath.Join(p.evil, "after-env.js")},
		{"--setup-files-after-env=" + filepath.Join(p.evil, "after-env.js")},
		{"--rootDir", p.evil},
		{"--root-dir=" + p.evil},
		{"--ROOTDIR=" + p.evil},
		{"--root_dir=" + p.evil},
		{"-c", filepath.Join(p.evil, "config.js")},
		{"--config=" + filepath.Join(p.evil, "config.js")},
	} {
		args := args
		callRejected(t, guarded, "run_tests", map[string]any{"testArgs": args}, "INPUT_REJECTED_DANGEROUS_FLAG")
	}
	if got := p.markersWritten(t); len(got) != 0 {
		t.Errorf("attacker code ran behind mcpguard: markers %q", got)
	}

	// Test filters are ordinary input, passed as argv.
	mustPass(t, guarded, "1 passed", "-t", "renders <App />")
	mustPass(t, guarded, "2 passed", "-t", "add|subtract")
	mustPass(t, guarded, "3 passed", "--coverage=false", "--testNamePattern=.")
	if got := p.markersWritten(t); len(got) != 0 {
		t.Errorf("attacker code ran behind mcpguard: markers %q", got)
	}
}

func TestRunnerPolicyGoTest(t *testing.T) {
	t.Parallel()
	p := newRunnerProject(t)
	writeFiles(t, p.proj, map[string]string{
		"go.mod": "module proj\n\ngo 1.22\n",
		"a_test.go": `package proj

import "testing"

func TestFoo(t *testing.T) {}
func TestA(t *testing.T)   {}
func TestB(t *testing.T)   {}
func TestC(t *testing.T)   { t.Fatal("TestC must not be selected") }

func BenchmarkX(b *testing.B) {
	for range b.N {
	}
}
`,
	})
	writeFiles(t, p.evil, map[string]string{
		"go.mod": "module evil\n\ngo 1.22\n",
		"e_test.go": `package evil

import (
	"os"
	"testing"
)

func TestEvil(t *testing.T) { os.WriteFile(` + strconv.Quote(p.marker("evil")) + `, []byte("ran"), 0o644) }
`,
	})
	env := runnerEnv(p)
	argv := runnerArgv(t, p, "go")

	direct := connect(t, nil, withEnv(argv, env...)...)
	for _, args := range [][]string{{"-C=" + p.evil}, {filepath.Join(p.evil, "e_test.go")}} {
		runTests(t, direct, args...)
		if got := p.markersWritten(t); len(got) != 1 {
			t.Fatalf("direct go test %q wrote markers %q: the hostile arguments are no attack on this go", args, got)
		}
		os.Remove(p.marker("evil"))
	}

	guarded := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Policy: shippedPolicy("go-test")}, argv...), env...)...)
	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"-C", p.evil}, "INPUT_REJECTED_DANGEROUS_FLAG"},
		{[]string{"-C=" + p.evil}, "INPUT_REJECTED_DANGEROUS_FLAG"},
		{[]string{"--C=" + p.evil}, "INPUT_REJECTED_DANGEROUS_FLAG"},
		{[]string{"--C", p.evil}, "INPUT_REJECTED_DANGEROUS_FLAG"},
		{[]string{"-C=../evil"}, "INPUT_REJECTED_DANGEROUS_FLAG"},
		{[]string{filepath.Join(p.evil, "e_test.go")}, "INPUT_REJECTED_PATH_SCOPE"},
		{[]string{"../evil/e_test.go"}, "INPUT_REJECTED_PATH_SCOPE"},
		{[]string{"-run", "TestEvil", "../evil"}, "INPUT_REJECTED_PATH_SCOPE"},
	} {
		callRejected(t, guarded, "run_tests", map[string]any{"testArgs": c.args}, c.code)
	}
	if got := p.markersWritten(t); len(got) != 0 {
		t.Errorf("attacker code ran behind mcpguard: markers %q", got)
	}

	mustPass(t, guarded, "ok", "-run", "^TestFoo$")
	mustPass(t, guarded, "--- PASS: TestB", "-v", "-run", "TestA|TestB")
	mustPass(t, guarded, "BenchmarkX", "-run", "^$", "-bench", "^BenchmarkX$", "-benchtime=1x")
	if got := p.markersWritten(t); len(got) != 0 {
		t.Errorf("attacker code ran behind mcpguard: markers %q", got)
	}
}

// TestRunnerPolicyGoTestRemoteAndDebug: with -mod=mod, go test downloads
// the module of a package named on the command line and runs its tests
// (here from a file: GOPROXY; from the public proxy in real life), and the
// undocumented build flag -debug-trace writes a file where the caller
// says. The direct runs prove both on this go; the guarded ones that the
// shipped policy refuses them.
func TestRunnerPolicyGoTestRemoteAndDebug(t *testing.T) {
	t.Parallel()
	p := newRunnerProject(t)
	writeFiles(t, p.proj, map[string]string{
		"go.mod":    "module proj\n\ngo 1.26\n",
		"a_test.go": "package proj\n\nimport \"testing\"\n\nfunc TestFoo(t *testing.T) {}\n",
	})
	proxy := goProxy(t, "evil.example/pwn", "v1.0.0", map[string]string{
		"go.mod": "module evil.example/pwn\n\ngo 1.20\n",
		"pwn.go": "package pwn\n",
		"pwn_test.go": `package pwn

import (
	"os"
	"testing"
)

func TestPwn(t *testing.T) { os.WriteFile(` + strconv.Quote(p.marker("remote")) + `, []byte("ran"), 0o644) }
`,
	})
	env := append(runnerEnv(p), "GOPROXY=file://"+proxy, "GOSUMDB=off", "GOFLAGS=-modcacherw",
		"GOMODCACHE="+filepath.Join(t.TempDir(), "modcache"))
	argv := runnerArgv(t, p, "go")
	attacks := [][]string{
		{"-mod=mod", "evil.example/pwn"},
		{"-run", "^TestFoo$", "-debug-trace=" + p.marker("trace")},
	}

	direct := connect(t, nil, withEnv(argv, env...)...)
	for _, args := range attacks {
		runTests(t, direct, args...)
		if got := p.markersWritten(t); len(got) != 1 {
			t.Fatalf("direct go test %q wrote markers %q: the hostile arguments are no attack on this go", args, got)
		}
		for _, m := range p.markersWritten(t) {
			os.Remove(p.marker(m))
		}
	}
	writeFiles(t, p.proj, map[string]string{"go.mod": "module proj\n\ngo 1.26\n"}) // -mod=mod added a require

	guarded := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Policy: shippedPolicy("go-test")}, argv...), env...)...)
	for _, args := range append(attacks, []string{"-mod", "mod", "evil.example/pwn"}, []string{"--debug-actiongraph", p.marker("ag")}) {
		callRejected(t, guarded, "run_tests", map[string]any{"testArgs": args}, "INPUT_REJECTED_DANGEROUS_FLAG")
	}
	mustPass(t, guarded, "ok", "-mod=readonly", "-run", "^TestFoo$")
	if got := p.markersWritten(t); len(got) != 0 {
		t.Errorf("attacker code ran or wrote behind mcpguard: markers %q", got)
	}
}

// goProxy writes a file: GOPROXY directory serving module at version with
// the given files, and returns its path.
func goProxy(t *testing.T, module, version string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	vdir := filepath.Join(dir, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, text := range files {
		w, err := zw.Create(module + "@" + version + "/" + name)
		if err == nil {
			_, err = w.Write([]byte(text))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `"}`),
		version + ".mod":  []byte(files["go.mod"]),
		version + ".zip":  buf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
