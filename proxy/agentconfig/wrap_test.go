package agentconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/goccy/go-yaml"
	"github.com/pelletier/go-toml/v2"

	"github.com/mcpguard/mcpguard/policy/pins"
)

const testExe = "/opt/mcpguard/bin/mcpguard"

// fixtureHome copies testdata/home into a temporary directory, with the
// project directory's path written into ~/.claude.json, and returns it
// with a snapshot of every file.
func fixtureHome(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	home := t.TempDir()
	files := map[string][]byte{}
	err := filepath.WalkDir("testdata/home", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("testdata/home", p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte("@PROJECT@"), []byte(filepath.Join(home, "project")))
		dst := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if rel == ".claude.json" {
			mode = 0o600
		}
		files[rel] = b
		return os.WriteFile(dst, b, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	return home, files
}

func testOptions(home string) Options {
	return Options{
		Env: Env{Home: home, AllProjects: true},
		Exe: testExe,
	}
}

// text writes a report as the command line prints it, its errors to
// errw, and says whether it failed.
func text(r Report, out, errw *bytes.Buffer) bool {
	for _, err := range r.Errs {
		errw.WriteString(err.Error() + "\n")
	}
	out.WriteString(r.String())
	return r.Failed()
}

func snapshot(t *testing.T, home string, rels map[string][]byte) map[string][]byte {
	t.Helper()
	now := map[string][]byte{}
	for rel := range rels {
		b, err := os.ReadFile(filepath.Join(home, rel))
		if err != nil {
			t.Fatal(err)
		}
		now[rel] = b
	}
	return now
}

// handWrapped is the entry of the fixture's ~/.claude.json that was
// wrapped by hand before wrap ran, and what unwrap makes of it.
const handWrapped = `      "command": "/usr/local/bin/mcpguard",
      "args": [
        "--policy",
        "/home/me/.config/mcpguard/fetch.yaml",
        "--",
        "uvx",
        "mcp-server-fetch"
      ],`

const handUnwrapped = `      "command": "uvx",
      "args": [
        "mcp-server-fetch"
      ],`

// strictJSON are the clients that read plain JSON (no comments, no
// trailing commas): what wrap writes there must stay plain JSON.
var strictJSON = map[string]bool{ClaudeDesktop: true, ClaudeCode: true, Windsurf: true, Gemini: true,
	"cline": true, "lmstudio": true, "junie": true, "amazonq": true, "kiro": true, "copilot": true, "crush": true, "antigravity": true}

// servers parses the file at path as its client does and returns its
// stdio servers' command and args by pointer.
func servers(t *testing.T, loc Location) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(loc.Path)
	if err != nil {
		t.Fatal(err)
	}
	if loc.Format == "toml" {
		var doc struct {
			Servers map[string]struct {
				Command string   `toml:"command"`
				Args    []string `toml:"args"`
			} `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s no longer parses as TOML: %v\n%s", loc.Path, err, b)
		}
		got := map[string][]string{}
		for name, e := range doc.Servers {
			if e.Command != "" {
				got[name] = append([]string{e.Command}, e.Args...)
			}
		}
		return got
	}
	if loc.Format == "yaml" {
		// Continue: a list of {name, command, args}; Goose: a map of
		// {cmd, args}, builtin extensions aside.
		type entry struct {
			Name    string   `yaml:"name"`
			Command string   `yaml:"command"`
			Cmd     string   `yaml:"cmd"`
			Args    []string `yaml:"args"`
		}
		c, err := Load(loc, IsGuardCommand(testExe))
		if err != nil {
			t.Fatalf("%s: %v", loc.Path, err)
		}
		got := map[string][]string{}
		add := func(name string, e entry) {
			i := slices.IndexFunc(c.Servers, func(s Server) bool { return s.Name == name })
			if i < 0 || c.Servers[i].Kind != Guarded && c.Servers[i].Kind != Unguarded {
				return // listed and left alone
			}
			if cmd := e.Command + e.Cmd; cmd != "" {
				got[name] = append([]string{cmd}, e.Args...)
			}
		}
		if loc.Client == "goose" {
			var doc struct {
				Extensions map[string]entry `yaml:"extensions"`
			}
			if err := yaml.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s no longer parses as YAML: %v\n%s", loc.Path, err, b)
			}
			for name, e := range doc.Extensions {
				add(name, e)
			}
			return got
		}
		var doc struct {
			MCPServers []entry `yaml:"mcpServers"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s no longer parses as YAML: %v\n%s", loc.Path, err, b)
		}
		for _, e := range doc.MCPServers {
			add(e.Name, e)
		}
		return got
	}
	if strictJSON[loc.Client] {
		if err := json.Unmarshal(b, new(jsontext.Value)); err != nil {
			t.Fatalf("%s is no longer plain JSON: %v", loc.Path, err)
		}
	}
	c, err := Load(loc, IsGuardCommand(testExe))
	if err != nil {
		t.Fatalf("%s: %v", loc.Path, err)
	}
	got := map[string][]string{}
	for _, s := range c.Servers {
		if s.Kind != Guarded && s.Kind != Unguarded {
			continue
		}
		e := c.root.Find(s.Pointer).Clone()
		e.Standardize()
		if loc.Shape == CommandArray {
			var entry struct {
				Command []string `json:"command"`
			}
			if err := json.Unmarshal(e.Pack(), &entry); err != nil {
				t.Fatal(err)
			}
			got[s.Pointer] = entry.Command
			continue
		}
		var entry struct {
			Command string   `json:"command"`
			Path    string   `json:"path"` // Zed's older {"command": {"path", "args"}}
			Args    []string `json:"args"`
		}
		if err := json.Unmarshal(e.Pack(), &entry); err != nil {
			t.Fatal(err)
		}
		got[s.Pointer] = append([]string{entry.Command + entry.Path}, entry.Args...)
	}
	return got
}

func TestWrapUnwrapRoundTrip(t *testing.T) {
	home, orig := fixtureHome(t)
	env := Env{Home: home, AllProjects: true}
	locs := Locate(env, nil)
	if len(locs) != len(orig) {
		t.Fatalf("found %d configs, want every one of the %d fixtures: %v", len(locs), len(orig), locs)
	}
	before := map[string]map[string][]string{}
	for _, l := range locs {
		if l.Unsupported == "" {
			before[l.Path] = servers(t, l)
		}
	}

	var out, errw bytes.Buffer
	if text(Wrap(testOptions(home)), &out, &errw) || errw.Len() > 0 {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	wrapped := snapshot(t, home, orig)
	wrappedCount := 0
	names := map[string]bool{}
	for _, l := range locs {
		if l.Unsupported != "" {
			if !bytes.Equal(wrapped[rel(home, l.Path)], orig[rel(home, l.Path)]) {
				t.Errorf("%s is not supported but changed", l.Path)
			}
			continue
		}
		after := servers(t, l)
		for ptr, argv := range before[l.Path] {
			got := after[ptr]
			if IsGuardCommand(testExe)(argv[0]) {
				if !slices.Equal(got, argv) {
					t.Errorf("%s %s: guarded entry changed: %q -> %q", l.Path, ptr, argv, got)
				}
				continue
			}
			// The baseline guards it, under the entry's own name in the
			// log (--server-name CLIENT[-PROJECT-HASH]-NAME).
			if len(got) < 3 || got[1] != "--server-name" || names[got[2]] {
				t.Errorf("%s %s: got %q, want --server-name and a name no other entry has", l.Path, ptr, got)
				continue
			}
			names[got[2]] = true
			want := append([]string{testExe, "--server-name", got[2], "--"}, argv...)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: got %q, want %q", l.Path, ptr, got, want)
			}
			wrappedCount++
		}
		// The backup is the file as it was, with its mode.
		backup := l.Path + BackupSuffix
		if b, err := os.ReadFile(backup); err != nil || !bytes.Equal(b, orig[rel(home, l.Path)]) {
			t.Errorf("%s: backup missing or different: %v", l.Path, err)
		}
		fi, _ := os.Stat(l.Path)
		bi, _ := os.Stat(backup)
		want := fs.FileMode(0o644)
		if filepath.Base(l.Path) == ".claude.json" {
			want = 0o600
		}
		if fi.Mode().Perm() != want || bi.Mode().Perm() != want {
			t.Errorf("%s: modes %v and %v (backup), want %v", l.Path, fi.Mode().Perm(), bi.Mode().Perm(), want)
		}
	}
	if wrappedCount != 46 {
		t.Errorf("wrapped %d servers, want the fixture's 46", wrappedCount)
	}

	// Wrapping again changes nothing, and says so.
	out.Reset()
	if text(Wrap(testOptions(home)), &out, &errw) {
		t.Fatalf("second wrap failed\n%s%s", out.String(), errw.String())
	}
	for rel, b := range snapshot(t, home, orig) {
		if !bytes.Equal(b, wrapped[rel]) {
			t.Errorf("second wrap changed %s:\n%s", rel, b)
		}
	}
	if strings.Contains(out.String(), "changed") || strings.Contains(out.String(), " wrapped ") {
		t.Errorf("second wrap reports changes:\n%s", out.String())
	}

	// Unwrap restores every byte, and unwraps the entry guarded by hand.
	out.Reset()
	if text(Unwrap(testOptions(home)), &out, &errw) || errw.Len() > 0 {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	for rel, b := range snapshot(t, home, orig) {
		want := orig[rel]
		if rel == ".claude.json" {
			if !bytes.Contains(want, []byte(handWrapped)) {
				t.Fatal("the fixture lost its hand-wrapped entry")
			}
			want = bytes.Replace(want, []byte(handWrapped), []byte(handUnwrapped), 1)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s after unwrap:\n%s\nwant:\n%s", rel, b, want)
		}
	}
}

func rel(home, path string) string {
	r, _ := filepath.Rel(home, path)
	return r
}

func TestWrapDryRunWritesNothing(t *testing.T) {
	home, orig := fixtureHome(t)
	var out, errw bytes.Buffer
	o := testOptions(home)
	o.DryRun = true
	inits := 0
	o.Policies = Policies{Dir: filepath.Join(home, "policies"), Shipped: os.DirFS("../../policies"),
		Init: func([]string, string) error { inits++; return nil }}
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s", errw.String())
	}
	for rel, b := range snapshot(t, home, orig) {
		if !bytes.Equal(b, orig[rel]) {
			t.Errorf("dry run changed %s", rel)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(home, "*", "*"+BackupSuffix))
	if _, err := os.Stat(o.Policies.Dir); err == nil || len(matches) > 0 || inits > 0 {
		t.Errorf("dry run wrote policies or backups (%v) or ran init %d times", matches, inits)
	}
	for _, want := range []string{
		"--- ~/.cursor/mcp.json\n+++ ~/.cursor/mcp.json\n",
		"-      \"command\": \"npx\", // runs from npm\n+      \"command\": \"" + testExe + "\", // runs from npm\n",
		"+        \"" + filepath.Join(home, "policies", "cursor-notes.yaml") + "\",\n",
		"-      \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"],\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the diff lacks %q:\n%s", want, out.String())
		}
	}
}

func TestWrapSkipsBadFilesAndHandlesTheRest(t *testing.T) {
	home, orig := fixtureHome(t)
	readOnly := filepath.Join(home, ".cursor", "mcp.json")
	malformed := filepath.Join(home, ".gemini", "settings.json")
	duplicate := filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
	if err := os.Chmod(readOnly, 0o444); err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		malformed: []byte(`{"mcpServers": {"x": {"command": "npx",, }}}`),
		duplicate: []byte(`{"mcpServers": {"x": {"command": "npx", "command": "evil"}}}`),
	}
	for p, b := range bad {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errw bytes.Buffer
	if !text(Wrap(testOptions(home)), &out, &errw) {
		t.Fatal("wrap did not fail")
	}
	for _, want := range []string{
		"~/.cursor/mcp.json: read-only (mode 0444)",
		"~/.gemini/settings.json: not valid JSON",
		"~/.codeium/windsurf/mcp_config.json: not valid JSON",
		"duplicate",
	} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errw.String())
		}
	}
	now := snapshot(t, home, orig)
	if !bytes.Equal(now[".cursor/mcp.json"], orig[".cursor/mcp.json"]) {
		t.Error("the read-only file changed")
	}
	for p, b := range bad {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, b) {
			t.Errorf("%s changed", p)
		}
		if _, err := os.Stat(p + BackupSuffix); err == nil {
			t.Errorf("%s got a backup", p)
		}
	}
	if _, err := os.Stat(readOnly + BackupSuffix); err == nil {
		t.Error("the read-only file got a backup")
	}
	if bytes.Equal(now[".claude.json"], orig[".claude.json"]) || bytes.Equal(now["project/.mcp.json"], orig["project/.mcp.json"]) {
		t.Error("the good files were not wrapped")
	}
}

func TestWrapFollowsSymlinks(t *testing.T) {
	home, orig := fixtureHome(t)
	dotfiles := filepath.Join(home, "dotfiles")
	os.Mkdir(dotfiles, 0o755)
	link := filepath.Join(home, ".cursor", "mcp.json")
	target := filepath.Join(dotfiles, "cursor-mcp.json")
	if err := os.Rename(link, target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	o := testOptions(home)
	o.Clients = []string{Cursor}
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s", errw.String())
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v", err)
	}
	b, _ := os.ReadFile(target)
	if !bytes.Contains(b, []byte(testExe)) {
		t.Errorf("the link's target was not wrapped:\n%s", b)
	}
	// --client cursor left the other clients alone.
	for rel, b := range snapshot(t, home, orig) {
		if !strings.Contains(rel, "cursor") && !bytes.Equal(b, orig[rel]) {
			t.Errorf("--client cursor changed %s", rel)
		}
	}
}

func TestWrapPlacesPolicies(t *testing.T) {
	home, _ := fixtureHome(t)
	dir := filepath.Join(home, "pol")
	var inits [][]string
	var out, errw bytes.Buffer
	o := testOptions(home)
	o.Policies = Policies{Dir: dir, Shipped: os.DirFS("../../policies"), Init: func(argv []string, out string) error {
		inits = append(inits, argv)
		if argv[0] == "coverctl" {
			return errors.New("cannot start coverctl")
		}
		return os.WriteFile(out, []byte("version: 1\nmode: audit\n"), 0o644)
	}}
	// A policy already there is the user's: used, never overwritten.
	os.MkdirAll(dir, 0o755)
	mine := []byte("version: 1\n# mine\n")
	os.WriteFile(filepath.Join(dir, "windsurf-git.yaml"), mine, 0o644)

	if !text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap did not fail for the init that failed\n%s%s", out.String(), errw.String())
	}
	sum := sha256.Sum256([]byte(filepath.Join(home, "project")))
	project := "project-" + hex.EncodeToString(sum[:3])
	shippedCopies := map[string]string{
		"claude-desktop-filesystem.yaml":              "filesystem.yaml",
		"claude-desktop-github.yaml":                  "github.yaml",
		"claude-desktop-memory.yaml":                  "memory.yaml",
		"claude-code-git.yaml":                        "git.yaml",
		"cursor-notes.yaml":                           "filesystem.yaml",
		"vscode-github.yaml":                          "github.yaml",
		"claude-code-" + project + "-everything.yaml": "everything.yaml",
		"cursor-" + project + "-fetch.yaml":           "fetch.yaml",
		"vscode-" + project + "-memory.yaml":          "memory.yaml",
		"vscode-playwright.yaml":                      "playwright.yaml",
		"continue-memory.yaml":                        "memory.yaml",
		"goose-fetch.yaml":                            "fetch.yaml",
	}
	for name, src := range shippedCopies {
		got, err := os.ReadFile(filepath.Join(dir, name))
		want, _ := os.ReadFile(filepath.Join("../../policies", src))
		// named after its entry, so its rejections are counted apart
		entry := strings.TrimSuffix(name, ".yaml")
		want = regexp.MustCompile(`(?m)^server: .*$`).ReplaceAll(want, []byte(`server: "`+entry+`"`))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not a copy of %s named %s: %v\n%s", name, src, entry, err, got)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "windsurf-git.yaml")); !bytes.Equal(got, mine) {
		t.Error("an existing policy was overwritten")
	}
	// notion, sqlite, pythonTools, coverctl; the gemini extension's notes,
	// junie's sqlite, amazonq's aws-docs, kiro's time and web, copilot's
	// repo-tools, crush's filesystem (a node script), codex's docs, multi
	// and tool; continue's SQLite, Time and Spaced, its JSON files'
	// notes-db, time and tasks, goose's github (the retired
	// server-github) and last, zed's legacy
	if wantInit := 23; len(inits) != wantInit {
		t.Errorf("init ran for %q, want the %d servers no shipped policy fits", inits, wantInit)
	}
	for _, name := range []string{"claude-desktop-notion.yaml", "claude-desktop-sqlite.yaml", "gemini-pythontools.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no starter policy %s: %v", name, err)
		}
	}
	// Entries reference their policy by absolute path; a failed init
	// leaves the server guarded by the baseline, and says so.
	c, err := Load(Location{Client: ClaudeCode, Path: filepath.Join(home, ".claude.json"), Key: "mcpServers", ClaudeProjects: true}, IsGuardCommand(testExe))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Servers {
		switch s.Name {
		case "git":
			if s.Policy != filepath.Join(dir, "claude-code-git.yaml") {
				t.Errorf("git's policy is %q", s.Policy)
			}
		case "tests":
			if s.Kind != Guarded || s.Policy != "" {
				t.Errorf("tests: %v, policy %q; want guarded by the baseline", s.Kind, s.Policy)
			}
		}
	}
	if !strings.Contains(errw.String()+out.String(), "cannot start coverctl") {
		t.Errorf("the failed init is not reported:\n%s%s", out.String(), errw.String())
	}
}

func TestShippedPolicy(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me"}, "filesystem.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/home/me"}, "filesystem.yaml"},
		{[]string{"/repo/integration/node_modules/.bin/mcp-server-filesystem", "/tmp"}, "filesystem.yaml"},
		{[]string{"uvx", "mcp-server-git", "--repository", "/r"}, "git.yaml"},
		{[]string{"uvx", "mcp-server-fetch==2025.4.7"}, "fetch.yaml"},
		{[]string{"python", "-m", "mcp_server_git"}, "git.yaml"},
		{[]string{"docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server:v0.20.0"}, "github.yaml"},
		{[]string{`C:\tools\github-mcp-server.exe`, "stdio"}, "github.yaml"},
		{[]string{"npx", "@playwright/mcp@0.0.83", "--headless"}, "playwright.yaml"},
		{[]string{"npx", "-y", "chrome-devtools-mcp@latest", "--no-usage-statistics"}, "chrome-devtools.yaml"},
		{[]string{"npx", "-y", "@wonderwhy-er/desktop-commander"}, "desktop-commander.yaml"},
		{[]string{"npx", "-y", "@upstash/context7-mcp", "--api-key", "k"}, "context7.yaml"},
		{[]string{"npx", "-y", "@notionhq/notion-mcp-server"}, "notion.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-sequential-thinking"}, "sequential-thinking.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-puppeteer"}, "puppeteer.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/db"}, "postgres.yaml"},
		{[]string{"/usr/local/bin/mcp-server-slack"}, "slack.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-brave-search"}, "brave-search.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-gitlab"}, "gitlab.yaml"},
		{[]string{"npx", "-y", "@supabase/mcp-server-supabase@latest", "--read-only", "--project-ref=abc"}, "supabase.yaml"},
		{[]string{"npx", "@sentry/mcp-server@0.39.0"}, "sentry.yaml"},
		{[]string{"env", "FIRECRAWL_API_KEY=x", "npx", "-y", "firecrawl-mcp"}, "firecrawl.yaml"},
		{[]string{"npx", "mcp-server-kubernetes"}, "kubernetes.yaml"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-github"}, ""},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystemx"}, ""},
		{[]string{"npx", "-y", "mcp-remote", "https://x/mcp"}, ""},
		{[]string{"node", "server.js", "--name", "-m"}, ""},
	} {
		if got := ShippedPolicy(tc.argv); got != tc.want {
			t.Errorf("ShippedPolicy(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestStatus(t *testing.T) {
	home, _ := fixtureHome(t)
	r := Status(testOptions(home), StatusOptions{Rejections: map[string]int{"mcp-server-fetch": 0, "uvx": 7}, Since: "24h"})
	if len(r.Errs) > 0 {
		t.Fatalf("errors: %v", r.Errs)
	}
	var out strings.Builder
	out.WriteString(r.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	find := func(client, server string) []string {
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) > 2 && f[0] == client && f[1] == server {
				return f
			}
		}
		t.Fatalf("no line for %s %s:\n%s", client, server, out.String())
		return nil
	}
	// the hand-wrapped fetch server: guarded, its policy (which does not
	// load here, so the log name is the command's base name, uvx)
	// the hand-wrapped entry's mcpguard and policy do not exist here: it
	// cannot start, and status says so rather than "guarded"
	if f := find(ClaudeCode, "guarded"); f[2] != "BROKEN" || f[3] != "/home/me/.config/mcpguard/fetch.yaml" || f[4] != "?" || f[5] != "7" ||
		!strings.Contains(out.String(), "guarded: BROKEN: /usr/local/bin/mcpguard is missing") {
		t.Errorf("guarded line: %q", f)
	}
	if f := find(Cursor, "notes"); f[2] != "UNGUARDED" {
		t.Errorf("notes line: %q", f)
	}
	if f := find(ClaudeCode, "sentry"); f[2] != "remote" || f[3] != "http" {
		t.Errorf("sentry line: %q", f)
	}
	if f := find(ClaudeDesktop, "windows"); f[2] != "skipped" || !strings.Contains(out.String(), "windows: a Windows command; mcpguard does not run on Windows") {
		t.Errorf("windows line: %q", f)
	}
	// TOML and YAML configs are read: their servers count
	// and Continue's JSON files: one entry alone, named after its file,
	// and Claude-style files
	for _, cs := range [][2]string{{Codex, "docs"}, {"continue", "SQLite"}, {"goose", "github"}, {"continue", "notes-db"}, {"continue", "git"}} {
		if f := find(cs[0], cs[1]); f[2] != "UNGUARDED" {
			t.Errorf("%s line: %q", cs[0], f)
		}
	}
	if f := find("continue", "search"); f[2] != "remote" {
		t.Errorf("continue's remote entry: %q", f)
	}
	if f := find("goose", "developer"); f[2] != "skipped" {
		t.Errorf("goose's builtin extension: %q", f)
	}
	if !strings.Contains(out.String(), "0 guarded, 46 unguarded, 1 BROKEN stdio servers") || strings.Contains(out.String(), "UNKNOWN") {
		t.Errorf("no summary:\n%s", out.String())
	}
	// one line per server, per note, the header and the two summary lines
	if want := len(r.Rows) + len(r.Notes) + 3; len(lines) != want {
		t.Errorf("%d lines, want %d", len(lines), want)
	}
	if !strings.Contains(out.String(), "~/.cursor/mcp.json: notes: unpinned: npx @modelcontextprotocol/server-filesystem: no exact version") {
		t.Errorf("no unpinned note for cursor's notes server:\n%s", out.String())
	}
	// every npx, uvx and docker server of the fixture but the pinned ones
	if r.Unpinned != 31 {
		t.Errorf("%d unpinned, want the fixture's 31", r.Unpinned)
	}
}

func TestShippedRootsLines(t *testing.T) {
	// Every shipped policy wrap copies has at most one roots key, on one
	// line, for setRoots to point at the server's directories.
	anyRoots := regexp.MustCompile(`(?m)^\s*roots:`)
	for _, sp := range shipped {
		b, err := os.ReadFile(filepath.Join("../../policies", sp.file))
		if err != nil {
			t.Fatal(err)
		}
		n := len(rootsLine().FindAllIndex(b, -1))
		if all := len(anyRoots.FindAllIndex(b, -1)); n > 1 || all != n {
			t.Errorf("%s: %d roots keys, %d on one line each; setRoots needs at most one, on one line", sp.file, all, n)
		}
	}
	for _, name := range []string{"filesystem.yaml", "git.yaml"} {
		b, _ := os.ReadFile(filepath.Join("../../policies", name))
		dirs := []string{t.TempDir(), filepath.Join(t.TempDir(), `a "quoted" dir`)}
		out, ok := setRoots(b, dirs)
		if !ok {
			t.Fatalf("%s: roots not set", name)
		}
		want := strings.Replace(string(b), `roots: ["${HOME}/src"]`,
			`roots: [`+string(quote(dirs[0]))+`, `+string(quote(dirs[1]))+`] # the server's directories (mcpguard wrap)`, 1)
		if string(out) != want {
			t.Errorf("%s with roots set:\n%s", name, out)
		}
	}
}

func TestCommitRefusesAFileChangedMeanwhile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(p, []byte(`{"written":"by the client meanwhile"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := commit(p, []byte(`{"as":"read"}`), []byte(`{"as":"wrapped"}`))
	if err == nil || !strings.Contains(err.Error(), "changed while") {
		t.Fatalf("commit: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"written":"by the client meanwhile"}` {
		t.Errorf("the file was overwritten: %s", b)
	}
	if _, err := os.Stat(p + BackupSuffix); err == nil {
		t.Error("a backup was written")
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestWrapLeavesOtherProjectsAlone(t *testing.T) {
	home, orig := fixtureHome(t)
	var out, errw bytes.Buffer
	o := testOptions(home)
	o.Env.AllProjects = false
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	now := snapshot(t, home, orig)
	for rel := range orig {
		changed := !bytes.Equal(now[rel], orig[rel])
		wantChange := !strings.HasPrefix(rel, "project/")
		if changed != wantChange {
			t.Errorf("%s: changed %v; only the project files must be left alone", rel, changed)
		}
	}
	// A project given by name is handled.
	o.Env.Projects = []string{filepath.Join(home, "project")}
	out.Reset()
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	if b, _ := os.ReadFile(filepath.Join(home, "project", ".mcp.json")); bytes.Equal(b, orig["project/.mcp.json"]) {
		t.Error("the named project was not wrapped")
	}
}

func TestWrapAddsAPolicyToBaselineEntries(t *testing.T) {
	home, orig := fixtureHome(t)
	var out, errw bytes.Buffer
	if text(Wrap(testOptions(home)), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	baseline := snapshot(t, home, orig)
	o := testOptions(home)
	o.Policies = Policies{Dir: filepath.Join(home, "pol"), Shipped: os.DirFS("../../policies")}
	out.Reset()
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s", errw.String())
	}
	b, _ := os.ReadFile(filepath.Join(home, ".cursor", "mcp.json"))
	want := strings.Replace(string(baseline[".cursor/mcp.json"]), "        \"--server-name\",\n",
		"        \"--policy\",\n        \""+filepath.Join(home, "pol", "cursor-notes.yaml")+"\",\n        \"--server-name\",\n", 1)
	if string(b) != want {
		t.Errorf("cursor after adding the policy:\n%s\nwant:\n%s", b, want)
	}
	// The hand-wrapped entry, which has a policy, and entries no shipped
	// policy fits are left as they were.
	now := snapshot(t, home, orig)
	if !bytes.Equal(now[".gemini/settings.json"], baseline[".gemini/settings.json"]) {
		t.Errorf("gemini changed:\n%s", now[".gemini/settings.json"])
	}
	// Unwrap still gives every original back.
	out.Reset()
	if text(Unwrap(testOptions(home)), &out, &errw) {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	for rel, b := range snapshot(t, home, orig) {
		if rel != ".claude.json" && !bytes.Equal(b, orig[rel]) {
			t.Errorf("%s after unwrap:\n%s", rel, b)
		}
	}
}

func TestPolicyNamesDoNotCollide(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	cfg := `{"mcpServers": {"Git": {"command": "uvx", "args": ["mcp-server-git"]}, "git": {"command": "uvx", "args": ["mcp-server-git", "-v"]}}}`
	os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(cfg), 0o644)
	var out, errw bytes.Buffer
	o := testOptions(home)
	o.Policies = Policies{Dir: filepath.Join(home, "pol"), Shipped: os.DirFS("../../policies")}
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s", errw.String())
	}
	b, _ := os.ReadFile(filepath.Join(home, ".cursor", "mcp.json"))
	for _, name := range []string{"cursor-git.yaml", "cursor-git-2.yaml"} {
		p := filepath.Join(home, "pol", name)
		if _, err := os.Stat(p); err != nil || !bytes.Contains(b, quote(p)) {
			t.Errorf("%s: %v, referenced: %v", name, err, bytes.Contains(b, quote(p)))
		}
	}
}

func TestLockState(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain.yaml", "version: 1\n")
	locked := write("locked.yaml", "version: 1\npins: locked.lock.yaml\n")
	missing := write("missing.yaml", "version: 1\npins: nowhere.lock.yaml\n")
	bad := write("bad.yaml", "version: 1\npins: bad.lock.yaml\n")
	write("bad.lock.yaml", "not: a lock\n")
	if err := pins.NewLock().WriteFile(filepath.Join(dir, "locked.lock.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ policy, want string }{
		{"", "session"},
		{plain, "session"},
		{locked, "0 tools"},
		{missing, "missing"},
		{bad, "invalid"},
		{filepath.Join(dir, "absent.yaml"), "?"},
	} {
		if got := LockState(Server{Kind: Guarded, Policy: tc.policy}); got != tc.want {
			t.Errorf("LockState(%q) = %q, want %q", tc.policy, got, tc.want)
		}
	}
}

func TestStatusNamesWhatItCannotRead(t *testing.T) {
	home := t.TempDir()
	write := func(rel, text string, mode fs.FileMode) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(home, "bin", "mcpguard")
	write("bin/mcpguard", "#!/bin/sh\n", 0o755)
	write("bin/mcpguard-0.9", "", 0o644)
	pol := filepath.Join(home, "p.yaml")
	write("p.yaml", "version: 1\nserver: x\n", 0o644)
	write(".cursor/mcp.json", `{"mcpServers": {"a": {"command": "node", "args": ["a.js"]},,}`, 0o644)
	write(".codex/config.toml", "[mcp_servers.a]\ncommand = \"node\"\ncommand = \"twice\"\n", 0o644)
	write(".gemini/settings.json", `{"mcpServers": {
		"ok": {"command": "`+exe+`", "args": ["--", "node", "s.js"]},
		"gone": {"command": "`+filepath.Join(home, "bin", "mcpguard-2")+`", "args": ["--", "node", "s.js"]},
		"noexec": {"command": "`+filepath.Join(home, "bin", "mcpguard-0.9")+`", "args": ["--", "node", "s.js"]},
		"nopolicy": {"command": "`+exe+`", "args": ["--policy", "`+filepath.Join(home, "none.yaml")+`", "--", "node", "s.js"]},
		"policy": {"command": "`+exe+`", "args": ["--policy", "`+pol+`", "--", "node", "s.js"]}
	}}`, 0o644)
	o := testOptions(home)
	o.Exe = exe
	r := Status(o, StatusOptions{})
	out := r.String()
	for _, want := range []string{
		"2 guarded, 0 unguarded, 3 BROKEN stdio servers",
		"UNKNOWN: 2 config(s) not read, their servers not counted: ~/.cursor/mcp.json, ~/.codex/config.toml",
		"gone: BROKEN: " + filepath.Join(home, "bin", "mcpguard-2") + " is missing",
		"noexec: BROKEN: " + filepath.Join(home, "bin", "mcpguard-0.9") + " is not executable",
		"nopolicy: BROKEN: its policy " + filepath.Join(home, "none.yaml") + " is missing",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if len(r.Errs) != 2 {
		t.Errorf("errors: %v", r.Errs)
	}
}

func TestGuardBehindLaunchersIsRecognised(t *testing.T) {
	isGuard := IsGuardCommand(testExe)
	for _, tc := range []struct {
		argv     []string
		launcher string
		server   string
	}{
		{[]string{"mcpguard", "--", "srv"}, "", "srv"},
		{[]string{"/usr/local/bin/mcpguard-1.2", "--", "srv"}, "", "srv"},
		{[]string{"/opt/bin/mcpguard_v2.0.1", "--policy", "p", "--", "srv"}, "", "srv"},
		{[]string{"npx", "-y", "mcpguard@1.2.0", "--", "srv"}, "npx", "srv"},
		{[]string{"env", "-u", "X", "A=1", "mcpguard", "--", "srv"}, "env", "srv"},
		{[]string{"/usr/bin/env", "mcpguard-1.2", "--", "srv"}, "env", "srv"},
		{[]string{"sh", "-c", "exec mcpguard --policy p -- srv a"}, "sh", "srv"},
		{[]string{"bash", "-lc", "mcpguard -- srv"}, "bash", "srv"},
		{[]string{"env", "A=1", "npx", "-y", "mcpguard", "--", "srv"}, "env", "srv"},
		{[]string{"pnpm", "dlx", "mcpguard", "--", "srv"}, "pnpm", "srv"},
	} {
		launcher, rest, ok := guardIn(tc.argv[0], tc.argv[1:], isGuard)
		_, server, _ := splitGuardArgs(rest)
		if !ok || launcher != tc.launcher || len(server) == 0 || server[0] != tc.server {
			t.Errorf("%q: launcher %q rest %q ok %v", tc.argv, launcher, rest, ok)
		}
	}
	for _, argv := range [][]string{
		{"npx", "-y", "@modelcontextprotocol/server-filesystem", "mcpguard"},
		{"env", "A=mcpguard", "node", "s.js"},
		{"sh", "-c", "node s.js mcpguard"},
		{"mcpguardian", "--", "srv"},
		{"node", "mcpguard"},
	} {
		if l, _, ok := guardIn(argv[0], argv[1:], isGuard); ok {
			t.Errorf("%q taken for mcpguard (through %q)", argv, l)
		}
	}
}

func TestWrapDoesNotWrapALaunchedGuardTwice(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".cursor", "mcp.json")
	orig := `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "mcpguard@1.2", "--", "node", "s.js"]}, "b": {"command": "sh", "args": ["-c", "mcpguard -- node s.js"]}}}`
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, wrap := range []bool{true, false} {
		var r Report
		if wrap {
			r = Wrap(testOptions(home))
		} else {
			r = Unwrap(testOptions(home))
		}
		if b, _ := os.ReadFile(p); string(b) != orig || r.Failed() {
			t.Errorf("wrap=%v changed the file or failed:\n%s\n%s", wrap, b, r)
		}
	}
}

// TestRootsFollowTheAgent: a relative directory in an entry means the
// directory the agent starts the server in (its cwd, its project), never
// the one wrap runs in: wrapped from /, "." must not become the root /.
// Where only the agent knows it (a user file's ".", ${workspaceFolder}),
// the copy's roots are the client's (client_roots: true), not the
// shipped ${HOME}/src.
func TestRootsFollowTheAgent(t *testing.T) {
	home := t.TempDir()
	project := filepath.Join(home, "app")
	data := filepath.Join(home, "data")
	for _, d := range []string{filepath.Join(project, "docs"), filepath.Join(data, "docs"), filepath.Join(home, ".cursor")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsEntry := func(arg, cwd string) string {
		e := `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "` + arg + `"]`
		if cwd != "" {
			e += `, "cwd": "` + cwd + `"`
		}
		return e + "}"
	}
	os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers": {"here": `+fsEntry(".", "")+`, "docs": `+fsEntry("./docs", "")+`}}`), 0o644)
	os.WriteFile(filepath.Join(home, ".cursor", "mcp.json"), []byte(`{"mcpServers": {"dot": `+fsEntry(".", "")+`, "ws": `+fsEntry("${workspaceFolder}", "")+`, "cwd": `+fsEntry("./docs", data)+`}}`), 0o644)
	shipped := os.DirFS(mustAbs(t, "../../policies"))
	t.Chdir("/")
	o := testOptions(home)
	o.Env.Projects = []string{project}
	dir := filepath.Join(home, "pol")
	o.Policies = Policies{Dir: dir, Shipped: shipped}
	var out, errw bytes.Buffer
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	sum := sha256.Sum256([]byte(project))
	prefix := "claude-code-app-" + hex.EncodeToString(sum[:3]) + "-"
	for name, want := range map[string]string{
		prefix + "here.yaml": `roots: ["` + project + `"]`,
		prefix + "docs.yaml": `roots: ["` + filepath.Join(project, "docs") + `"]`,
		"cursor-cwd.yaml":    `roots: ["` + filepath.Join(data, "docs") + `"]`,
		"cursor-dot.yaml":    "\n    client_roots: true # the directories the agent gives the server (mcpguard wrap)\n",
		"cursor-ws.yaml":     "\n    client_roots: true # the directories the agent gives the server (mcpguard wrap)\n",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s: want %s: %v\n%s", name, want, err, out.String())
		}
		if bytes.Contains(b, []byte(`roots: ["/"]`)) || bytes.Contains(b, []byte("${HOME}/src")) {
			t.Errorf("%s: rooted at /", name)
		}
	}
	if strings.Count(out.String(), "roots follow the agent (client_roots") != 2 {
		t.Errorf("wrap does not say the roots of the two relative entries follow the agent:\n%s", out.String())
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCodexEdgeEntries(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	orig := "[mcp_servers]\ninline = { command = \"npx\", args = [\"x\"] }\ndotted.command = \"uvx\"\n\n[mcp_servers.last]\ncommand = \"node\""
	if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	if text(Wrap(testOptions(home)), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	b, _ := os.ReadFile(p)
	want := strings.Replace(orig, "command = \"node\"", "command = \""+testExe+"\"\nargs = [\"--server-name\", \"codex-last\", \"--\", \"node\"] # added by mcpguard wrap", 1)
	if string(b) != want || strings.Count(out.String(), "inline table or with dotted keys") != 2 {
		t.Errorf("wrapped:\n%s\nwant:\n%s\nreport:\n%s", b, want, out.String())
	}
	if text(Unwrap(testOptions(home)), &out, &errw) {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	if b, _ := os.ReadFile(p); string(b) != orig {
		t.Errorf("unwrapped:\n%q\nwant:\n%q", b, orig)
	}
}

// TestLocateClaudeConfigDir: with CLAUDE_CONFIG_DIR set, Claude Code's
// user file is there, not in the home directory (as the real CLI writes
// it), and the projects it names are found from it.
func TestLocateClaudeConfigDir(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "cfg")
	project := filepath.Join(home, "app")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".claude.json"), []byte(`{"projects": {"`+project+`": {}}}`), 0o644)
	os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{}`), 0o644)
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	t.Setenv("HOME", home)
	e, err := EnvFromOS("", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.AllProjects = true
	var paths []string
	for _, l := range Locate(e, []string{ClaudeCode}) {
		paths = append(paths, l.Path)
	}
	if want := []string{filepath.Join(dir, ".claude.json"), filepath.Join(project, ".mcp.json")}; !slices.Equal(paths, want) {
		t.Errorf("Locate: %q, want %q", paths, want)
	}
}

// TestLogNameOfBaselineEntries: an entry wrap guarded with the baseline
// carries --server-name, and status counts its rejections under that
// name, apart from other entries run by the same launcher.
func TestLogNameOfBaselineEntries(t *testing.T) {
	for _, tc := range []struct {
		s    Server
		want string
	}{
		{Server{Own: []string{"--server-name", "cursor-notes"}, Argv: []string{"npx", "a"}}, "cursor-notes"},
		{Server{Own: []string{"--server-name=cursor-b"}, Argv: []string{"npx", "b"}}, "cursor-b"},
		{Server{Argv: []string{"npx", "c"}}, "npx"},
	} {
		if got := LogName(tc.s); got != tc.want {
			t.Errorf("LogName(%q) = %q, want %q", tc.s.Own, got, tc.want)
		}
	}
}

// TestCodexArgsLineRoundTrip: unwrap takes out the args line wrap added
// to a Codex entry without one (it carries a marker comment), and keeps
// a user's own args = [], at the end of the file or not.
func TestCodexArgsLineRoundTrip(t *testing.T) {
	for _, orig := range []string{
		"[mcp_servers.a]\ncommand = \"node\"\nargs = []\n",
		"[mcp_servers.a]\ncommand = \"node\"\nargs = []",
		"[mcp_servers.a]\ncommand = \"node\"\n",
		"[mcp_servers.a]\ncommand = \"node\"",
		"[mcp_servers.a]\ncommand = \"node\"\n\n[mcp_servers.b]\ncommand = \"x\"\nargs = [] # none\n",
	} {
		home := t.TempDir()
		p := filepath.Join(home, ".codex", "config.toml")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errw bytes.Buffer
		if text(Wrap(testOptions(home)), &out, &errw) || text(Unwrap(testOptions(home)), &out, &errw) {
			t.Fatalf("%q: wrap or unwrap failed\n%s%s", orig, out.String(), errw.String())
		}
		if b, _ := os.ReadFile(p); string(b) != orig {
			t.Errorf("%q came back as %q", orig, b)
		}
	}
}

// TestContinueEntryFiles: Continue reads every JSON file in its
// mcpServers folders as one server alone (named after the file) unless
// it holds mcpServers or Claude Code's projects; a remote one is listed
// and left alone, a file of neither shape is listed as skipped, and a
// wrapped one-server file unwraps byte for byte.
func TestContinueEntryFiles(t *testing.T) {
	home := t.TempDir()
	files := map[string]string{
		"docs.json":  `{"type": "sse", "url": "https://docs.example.com/sse"}`,
		"odd.json":   `{"name": "no command here"}`,
		"local.json": "{\n  // as the docs show it\n  \"command\": \"node\",\n  \"args\": [\"/opt/srv/index.js\"]\n}\n",
	}
	for name, text := range files {
		writeFile(t, home, ".continue/mcpServers/"+name, text, 0o644)
	}
	o := testOptions(home)
	o.Clients = []string{"continue"}
	var out, errw bytes.Buffer
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	got, _ := os.ReadFile(filepath.Join(home, ".continue", "mcpServers", "local.json"))
	if want := "{\n  // as the docs show it\n  \"command\": \"" + testExe + "\",\n  \"args\": [\"--server-name\", \"continue-local\", \"--\", \"node\", \"/opt/srv/index.js\"]\n}\n"; string(got) != want {
		t.Errorf("local.json wrapped as\n%s\nwant\n%s", got, want)
	}
	for _, line := range []string{"docs  remote  sse", "odd  skipped  no command and no url", "local  wrapped  policy: baseline"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, out.String())
		}
	}
	if text(Unwrap(o), &out, &errw) {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	for name, text := range files {
		if got, _ := os.ReadFile(filepath.Join(home, ".continue", "mcpServers", name)); string(got) != text {
			t.Errorf("%s after unwrap:\n%s", name, got)
		}
	}
}
