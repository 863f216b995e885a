package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The agents' own config readers (Claude Code, Gemini CLI, Codex,
// Copilot CLI, opencode, Continue's parser) over the fixture home wrap's
// unit tests use (proxy/agentconfig/testdata/home, an agent config of
// every agent in the table): each reads its files before wrap, after
// wrap and the readings must agree entry for entry, every stdio entry
// now mcpguard in front of the command it had; unwrap gives every file
// of the home back byte for byte.

// parsedEntry is one MCP server as an agent's reader read it: the argv
// it starts (command first) or, for a remote server, its URL.
type parsedEntry struct {
	Argv []string
	URL  string
}

// serverEntry is a stdio server's command and args, or a remote
// server's URL.
func serverEntry(stdio bool, command string, args []string, url string) parsedEntry {
	if stdio {
		return parsedEntry{Argv: append([]string{command}, args...)}
	}
	return parsedEntry{URL: url}
}

// agentReader is an agent's own reader of its MCP configs in a home; it
// returns what it read by file and server name.
type agentReader func(t *testing.T, home string) map[string]parsedEntry

// fixtureAgentHome copies the fixture home into a temporary directory,
// with its project directory's path where the fixture says @PROJECT@,
// and returns it with every file's bytes by relative path.
func fixtureAgentHome(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(moduleRoot, "proxy", "agentconfig", "testdata", "home")
	files := map[string][]byte{}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte("@PROJECT@"), []byte(filepath.Join(home, "project")))
		files[rel] = b
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(home, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return home, files
}

// readCopilot: `copilot mcp list --json` (GitHub Copilot CLI), run in
// the fixture's project, lists the servers of ~/.copilot/mcp-config.json
// and the project's without starting them.
func readCopilot(t *testing.T, home string) map[string]parsedEntry {
	out := agentStdout(t, agentEnv(home), filepath.Join(home, "project"), npmServer(t, "copilot"), "mcp", "list", "--json")
	var list struct {
		MCPServers map[string]struct {
			Type, Command, URL string
			Args               []string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("copilot mcp list --json: %v\n%s", err, out)
	}
	got := map[string]parsedEntry{}
	for name, s := range list.MCPServers {
		got[name] = serverEntry(s.Type == "local" || s.Type == "stdio", s.Command, s.Args, s.URL)
	}
	return got
}

// copilotProject makes Copilot CLI read the project's .github/mcp.json:
// it reads a project's files only in a folder the user trusts, and
// .github/mcp.json only when the project has no .mcp.json (Claude
// Code's, which it would read instead).
func copilotProject(t *testing.T, home string) {
	project := filepath.Join(home, "project")
	trust, _ := json.Marshal(map[string][]string{"trusted_folders": {project}})
	if err := os.WriteFile(filepath.Join(home, ".copilot", "config.json"), trust, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
}

// readOpencode: `opencode debug config` prints the configuration
// opencode resolved from $XDG_CONFIG_HOME/opencode/opencode.json, without
// starting a server (`opencode mcp list` starts each one). Its binary
// comes from the npm package of its Linux x64 build (see
// integration/package.json).
func readOpencode(t *testing.T, home string) map[string]parsedEntry {
	bin := filepath.Join(moduleRoot, "integration", "node_modules", "opencode-linux-x64-baseline", "bin", "opencode")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("opencode's Linux x64 build is missing (npm installs it on Linux x64 only): %v", err)
	}
	out := agentStdout(t, agentEnv(home), home, bin, "debug", "config")
	var config struct {
		MCP map[string]struct {
			Type, URL string
			Command   []string
		} `json:"mcp"`
	}
	if err := json.Unmarshal(out, &config); err != nil {
		t.Fatalf("opencode debug config: %v\n%s", err, out)
	}
	got := map[string]parsedEntry{}
	for name, s := range config.MCP {
		got[name] = parsedEntry{Argv: s.Command, URL: s.URL}
	}
	return got
}

// readContinue: Continue's own parser (@continuedev/config-yaml, and its
// JSON loader's rules) over the user's and the project's .continue
// directories (continue.mjs).
func readContinue(t *testing.T, home string) map[string]parsedEntry {
	out := runNodeClient(t, "continue.mjs", []string{filepath.Join(home, ".continue"), filepath.Join(home, "project", ".continue")})
	var list []struct {
		File, Name, Command, URL string
		Args                     []string
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("continue.mjs: %v\n%s", err, out)
	}
	got := map[string]parsedEntry{}
	for _, s := range list {
		key, _ := filepath.Rel(home, s.File)
		got[key+" "+s.Name] = serverEntry(s.Command != "", s.Command, s.Args, s.URL)
	}
	return got
}

// readCodex: `codex mcp list --json` over ~/.codex/config.toml.
func readCodex(t *testing.T, home string) map[string]parsedEntry {
	out := agentStdout(t, append(agentEnv(home), "RUST_LOG=off"), home, npmServer(t, "codex"), "mcp", "list", "--json")
	var list []struct {
		Name      string
		Transport struct {
			Type, Command, URL string
			Args               []string
		}
	}
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("codex mcp list --json: %v\n%s", err, out)
	}
	got := map[string]parsedEntry{}
	for _, s := range list {
		got[s.Name] = serverEntry(s.Transport.Type == "stdio", s.Transport.Command, s.Transport.Args, s.Transport.URL)
	}
	return got
}

// listedEntries reads an agent's text listing of its servers, one line
// each; line matches the name (group 1), what it runs or its URL (2) and,
// for a remote server, its transport (3). A command line is split at
// spaces (no argument in the fixture holds one).
func listedEntries(t *testing.T, listing string, line *regexp.Regexp) map[string]parsedEntry {
	t.Helper()
	got := map[string]parsedEntry{}
	for _, m := range line.FindAllStringSubmatch(listing, -1) {
		if m[3] != "" {
			got[m[1]] = parsedEntry{URL: m[2]}
		} else {
			got[m[1]] = parsedEntry{Argv: strings.Fields(m[2])}
		}
	}
	return got
}

// geminiLine is a server in `gemini mcp list`: "✗ NAME: WHAT (stdio) -
// Disconnected", "(from EXTENSION)" after the name of an extension's.
var geminiLine = regexp.MustCompile(`(?m)^\S+ (\S+?)(?: \(from [^)]+\))?: (.*) \((?:stdio|(sse|http))\) - \w+$`)

// readGemini: `gemini mcp list` reads ~/.gemini/settings.json and every
// extension's gemini-extension.json (with ${extensionPath} expanded). It
// tries each server, which fails at once here: the fixture's commands do
// not exist or find no network.
func readGemini(t *testing.T, home string) map[string]parsedEntry {
	env := append(agentEnv(home), "npm_config_offline=true")
	return listedEntries(t, runAgent(t, env, home, "gemini", "mcp", "list"), geminiLine) // it lists on stderr
}

// claudeLine is a server in `claude mcp list`: "NAME: WHAT - ✘ Failed to
// connect", " (HTTP)" or " (SSE)" after a remote server's URL.
var claudeLine = regexp.MustCompile(`(?m)^([^\s:]+): (.*?)(?: \((HTTP|SSE)\))? - \S+ [A-Z].*$`)

// readClaude: `claude mcp list`, run in the fixture's project, reads
// ~/.claude.json (user servers and the project's local ones) and the
// project's .mcp.json (whose servers it lists as pending approval, not
// started). It tries each other server, which fails at once here.
func readClaude(t *testing.T, home string) map[string]parsedEntry {
	env := append(agentEnv(home), "npm_config_offline=true")
	return listedEntries(t, runAgent(t, env, filepath.Join(home, "project"), "claude", "mcp", "list"), claudeLine)
}

// TestAgentParsers: for each agent whose own config reader installs
// from npm and runs offline, wrap the fixture home's files of that
// agent; the agent's reader accepts every file wrap edited and reads
// each stdio server as mcpguard (its own flags, "--") in front of the
// argv it read before, and each remote server, and each entry wrap
// lists and leaves for the user, as before; unwrap restores every file
// as it was before wrap (after the agent's first run: Claude Code
// rewrites ~/.claude.json in its own layout), and unwraps the entry
// the fixture wrapped by hand.
func TestAgentParsers(t *testing.T) {
	t.Parallel()
	agents := &atOnce{t: t} // each agent has a home of its own
	for _, a := range []struct {
		name          string
		read          agentReader
		stdio, remote int      // what the reader must find in the fixture
		left          []string // the stdio entries wrap leaves alone
		setup         func(t *testing.T, home string)
	}{
		{"copilot", readCopilot, 2, 1, nil, copilotProject},
		{"opencode", readOpencode, 2, 1, nil, nil},
		// A YAML entry in flow style is left for the user.
		{"continue", readContinue, 10, 2, []string{".continue/config.yaml Inline"}, nil},
		{"codex", readCodex, 3, 1, nil, nil},
		{"gemini", readGemini, 2, 1, nil, nil},
		// An entry guarded by hand already.
		{"claude-code", readClaude, 4, 2, []string{"guarded"}, nil},
	} {
		agents.Run(a.name, func(t *testing.T) {
			requireGuard(t)
			home, files := fixtureAgentHome(t)
			env := cleanEnv(home)
			if a.setup != nil {
				a.setup(t, home)
			}
			before := a.read(t, home)
			orig := map[string][]byte{}
			for rel := range files {
				b, err := os.ReadFile(filepath.Join(home, rel))
				if errors.Is(err, fs.ErrNotExist) {
					continue // setup removed it
				} else if err != nil {
					t.Fatal(err)
				}
				orig[rel] = b
				if a.name == "claude-code" { // the entry wrapped by hand is Claude Code's
					orig[rel] = bytes.Replace(b, []byte(handWrapped), []byte(handUnwrapped), 1)
				}
			}
			stdio := 0
			for _, e := range before {
				if e.Argv != nil {
					stdio++
				}
			}
			if stdio != a.stdio || len(before)-stdio != a.remote {
				t.Fatalf("%s read %d stdio and %d remote servers in the fixture, want %d and %d: %v", a.name, stdio, len(before)-stdio, a.stdio, a.remote, before)
			}

			scope := []string{"--client", a.name, "--project", filepath.Join(home, "project")}
			if out, errOut, code := runMcpguard(t, env, append([]string{"wrap"}, scope...)...); code != 0 {
				t.Fatalf("wrap: status %d\n%s%s", code, out, errOut)
			}
			after := a.read(t, home)
			if len(after) != len(before) {
				t.Errorf("%s reads %d servers after wrap, %d before: %v", a.name, len(after), len(before), after)
			}
			for key, was := range before {
				now, ok := after[key]
				switch {
				case !ok:
					t.Errorf("%s: %s is gone after wrap", a.name, key)
				case was.Argv == nil || slices.Contains(a.left, key):
					if now.URL != was.URL || !slices.Equal(now.Argv, was.Argv) {
						t.Errorf("%s: %s, which wrap leaves alone, changed: %+v -> %+v", a.name, key, was, now)
					}
				case len(now.Argv) == 0 || !isGuard(now.Argv[0]):
					t.Errorf("%s: %s runs %q after wrap, want mcpguard in front of %q", a.name, key, now.Argv, was.Argv)
				default:
					sep := slices.Index(now.Argv, "--")
					if sep < 0 || !slices.Equal(now.Argv[sep+1:], was.Argv) {
						t.Errorf("%s: %s runs %q after wrap, want mcpguard ... -- %q", a.name, key, now.Argv, was.Argv)
					}
				}
			}

			if out, errOut, code := runMcpguard(t, env, append([]string{"unwrap"}, scope...)...); code != 0 {
				t.Fatalf("unwrap: status %d\n%s%s", code, out, errOut)
			}
			for rel, want := range orig {
				if got, err := os.ReadFile(filepath.Join(home, rel)); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s after unwrap (%v):\n%s\nwant:\n%s", rel, err, got, want)
				}
			}
		})
	}
	agents.Wait()
}

// handWrapped is the fixture's entry wrapped by hand before wrap runs
// (in the layout Claude Code writes ~/.claude.json in, which is the
// fixture's own), and handUnwrapped what unwrap makes of it.
const (
	handWrapped = `      "command": "/usr/local/bin/mcpguard",
      "args": [
        "--policy",
        "/home/me/.config/mcpguard/fetch.yaml",
        "--",
        "uvx",
`
	handUnwrapped = `      "command": "uvx",
      "args": [
`
)
