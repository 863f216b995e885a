package agentconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeFile writes text to home/rel, making its directories.
func writeFile(t *testing.T, home, rel, text string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(home, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// pythonEnv lays out a Python environment with name's .dist-info at
// version and, when command is set, its console script.
func pythonEnv(t *testing.T, home, env, name, version, command string) {
	t.Helper()
	writeFile(t, home, env+"/lib/python3.12/site-packages/"+strings.ReplaceAll(name, "-", "_")+"-"+version+".dist-info/METADATA", "Name: "+name+"\n", 0o644)
	if command != "" {
		writeFile(t, home, env+"/bin/"+command, "#!/bin/sh\n", 0o755)
	}
}

// runnerHome is a home for the runners' records, with the variables
// that would move them elsewhere cleared (bunx's under home/tmp), and
// its tmp directory.
func runnerHome(t *testing.T) (home, tmp string) {
	home = t.TempDir()
	tmp = filepath.Join(home, "tmp")
	for k, v := range map[string]string{"npm_config_cache": "", "BUN_TMPDIR": tmp, "UV_TOOL_DIR": "", "UV_CACHE_DIR": "",
		"XDG_DATA_HOME": "", "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": ""} {
		t.Setenv(k, v)
	}
	return home, tmp
}

// TestWrapPinVersionsRunners: --pin-versions in Codex's TOML and
// Continue's and Goose's YAML, for each runner whose release can be read
// offline: npx's cache, bunx's directory, a tool uv installed, uv's
// cached tool environments, the local engine's image digest. Only the
// pinned word changes (in its own quoting); what cannot be known is left
// and named: two cached releases, an environment without the command, an
// image the engine does not have, pipx, pnpm dlx. Unwrap keeps the pins.
func TestWrapPinVersionsRunners(t *testing.T) {
	home, tmp := runnerHome(t)
	writeNPX(t, home, "0a1b2c3d4e5f6a7b", "@modelcontextprotocol/server-memory", "@modelcontextprotocol/server-memory", "2026.1.26")
	writeFile(t, tmp, "bunx-"+strconv.Itoa(os.Getuid())+"-mcp-bun@latest/node_modules/mcp-bun/package.json", `{"name": "mcp-bun", "version": "0.4.1"}`, 0o644)
	pythonEnv(t, home, ".local/share/uv/tools/mcp-server-time", "mcp-server-time", "2025.9.25", "mcp-server-time")
	cache := ".cache/uv/environments-v2/"
	pythonEnv(t, home, cache+"1f2e3d/9a8b7c", "mcp-server-fetch", "2025.4.7", "mcp-server-fetch")
	pythonEnv(t, home, cache+"1f2e3d/0d0e0f", "mcp_server_git", "2026.1.14", "mcp-server-git")
	pythonEnv(t, home, cache+"1f2e3d/5a5b5c", "mcp-server-git", "2025.1.1", "")                  // a dependency elsewhere: no command
	pythonEnv(t, home, cache+"1f2e3d/6a6b6c", "mcp-server-sqlite", "0.6.2", "mcp-server-sqlite") // two releases cached:
	pythonEnv(t, home, cache+"4c4d4e/6a6b6c", "mcp-server-sqlite", "0.6.3", "mcp-server-sqlite") // nothing to choose from
	digest := "sha256:" + strings.Repeat("ab", 32)
	writeFile(t, home, "bin/docker", `#!/bin/sh
case "$*" in
"image inspect --format {{json .RepoDigests}} mcp/fetch:latest") echo '["docker.io/mcp/fetch@`+digest+`"]' ;;
*) echo "Error: No such image: $5" >&2; exit 1 ;;
esac
`, 0o755)
	t.Setenv("PATH", filepath.Join(home, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))

	codex := `# servers
[mcp_servers.memory]
command = "npx"
args = ['-y', '@modelcontextprotocol/server-memory'] # the usual

[mcp_servers.time]
command = "uvx"
args = ["mcp-server-time", "--local-timezone=UTC"]

[mcp_servers.git]
command = "uvx"
args = ["--from", "mcp_server_git", "mcp-server-git"]

[mcp_servers.sqlite]
command = "uvx"
args = ["mcp-server-sqlite"]

[mcp_servers.web]
command = "docker"
args = ["run", "-i", "--rm", "mcp/fetch:latest"]

[mcp_servers.gone]
command = "docker"
args = ["run", "-i", "--rm", "mcp/absent"]
`
	cont := `name: my assistant
mcpServers:
  - name: bun
    command: bunx
    args:
      - mcp-bun@latest   # tracks releases
  - name: fetch
    command: uvx
    args: ["mcp-server-fetch"]
  - name: pipx
    command: pipx
    args: [run, mcp-pipx]
`
	goose := `extensions:
  dlx:
    type: stdio
    cmd: pnpm
    args: [dlx, mcp-dlx]
  memory:
    type: stdio
    cmd: npx
    args:
    - '@modelcontextprotocol/server-memory'
`
	writeFile(t, home, ".codex/config.toml", codex, 0o600)
	writeFile(t, home, ".continue/config.yaml", cont, 0o600)
	writeFile(t, home, ".config/goose/config.yaml", goose, 0o600)

	o := testOptions(home)
	o.Clients = []string{Codex, "continue", "goose"}
	o.PinVersions = true
	var out, errw bytes.Buffer
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	report := out.String()
	for _, line := range []string{
		"pinned @modelcontextprotocol/server-memory@2026.1.26 (the release npx installed)",
		"pinned mcp-server-time@2025.9.25 (the tool uv installed)",
		"pinned mcp_server_git==2026.1.14 (the release uvx installed)",
		"not pinned: no single release in uv's tool environments found (uvx mcp-server-sqlite: no exact version",
		"pinned mcp/fetch:latest@" + digest + " (the digest of the local image)",
		"not pinned: no local digest of mcp/absent (docker image inspect: Error: No such image: mcp/absent) (docker run mcp/absent: an image without a digest",
		"pinned mcp-bun@0.4.1 (the release bunx installed)",
		"pinned mcp-server-fetch@2025.4.7 (the release uvx installed)",
		"not pinned: pipx run's app word takes no version: pin it by hand with --spec PKG==X.Y.Z (pipx run mcp-pipx: no exact version",
		"not pinned: its runner keeps no offline record of the release it ran: pin it by hand (pnpm dlx mcp-dlx: no exact version",
	} {
		if !strings.Contains(report, line) {
			t.Errorf("report lacks %q:\n%s", line, report)
		}
	}
	pins := map[string]*strings.Replacer{
		".codex/config.toml": strings.NewReplacer("'@modelcontextprotocol/server-memory'", "'@modelcontextprotocol/server-memory@2026.1.26'",
			`"mcp-server-time"`, `"mcp-server-time@2025.9.25"`, `"mcp_server_git"`, `"mcp_server_git==2026.1.14"`,
			`"mcp/fetch:latest"`, `"mcp/fetch:latest@`+digest+`"`),
		".continue/config.yaml": strings.NewReplacer("- mcp-bun@latest ", "- mcp-bun@0.4.1 ", `"mcp-server-fetch"`, `"mcp-server-fetch@2025.4.7"`),
		".config/goose/config.yaml": strings.NewReplacer("'@modelcontextprotocol/server-memory'",
			"'@modelcontextprotocol/server-memory@2026.1.26'"),
	}
	origs := map[string]string{".codex/config.toml": codex, ".continue/config.yaml": cont, ".config/goose/config.yaml": goose}
	for rel := range origs {
		if wrapped, _ := os.ReadFile(filepath.Join(home, filepath.FromSlash(rel))); !bytes.Contains(wrapped, []byte(testExe)) {
			t.Errorf("%s not wrapped:\n%s", rel, wrapped)
		}
	}
	out.Reset()
	if text(Unwrap(o), &out, &errw) {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	for rel, orig := range origs {
		got, _ := os.ReadFile(filepath.Join(home, filepath.FromSlash(rel)))
		if want := pins[rel].Replace(orig); string(got) != want {
			t.Errorf("%s after unwrap:\n%s\nwant the original with only the pinned words changed:\n%s", rel, got, want)
		}
	}
	st := Status(o, StatusOptions{})
	if st.Unpinned != 4 {
		t.Errorf("status counts %d unpinned, want sqlite, gone, pipx and dlx\n%s", st.Unpinned, st.String())
	}
}

// TestWrapPinVersionsHostileCache: what a package cache or the local
// engine records is written into the agent's configuration only when it
// is an exact release or a sha256 digest: a version or a digest with
// quotes, a newline, shell text or an option is not pinned, and the
// file keeps its entries (unwrap gives back the original).
func TestWrapPinVersionsHostileCache(t *testing.T) {
	home, tmp := runnerHome(t)
	writeNPX(t, home, "0a1b2c3d4e5f6a7b", "mcp-npx", "mcp-npx", "1.0.0\"]\nevil = [\"x")
	writeFile(t, tmp, "bunx-"+strconv.Itoa(os.Getuid())+"-mcp-bun@latest/node_modules/mcp-bun/package.json", `{"name": "mcp-bun", "version": "1.0.0' --eval=x"}`, 0o644)
	pythonEnv(t, home, ".local/share/uv/tools/mcp-uv", "mcp-uv", "1.0.0$(id)", "mcp-uv")
	writeFile(t, home, "bin/docker", `#!/bin/sh
echo '["docker.io/mcp/fetch@sha256:ab\" --privileged \"cd"]'
`, 0o755)
	t.Setenv("PATH", filepath.Join(home, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	codex := `[mcp_servers.npx]
command = "npx"
args = ['-y', 'mcp-npx']

[mcp_servers.uv]
command = "uvx"
args = ["mcp-uv"]

[mcp_servers.web]
command = "docker"
args = ["run", "-i", "--rm", "mcp/fetch:latest"]
`
	cont := `mcpServers:
  - name: bun
    command: bunx
    args:
      - mcp-bun@latest
`
	writeFile(t, home, ".codex/config.toml", codex, 0o600)
	writeFile(t, home, ".continue/config.yaml", cont, 0o600)
	o := testOptions(home)
	o.Clients = []string{Codex, "continue"}
	o.PinVersions = true
	var out, errw bytes.Buffer
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	if report := out.String(); strings.Contains(report, "pinned mcp") || strings.Contains(report, "pinned docker") || strings.Contains(report, "pinned mcp/fetch") {
		t.Errorf("a hostile record was pinned:\n%s", report)
	}
	out.Reset()
	if text(Unwrap(o), &out, &errw) {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	for rel, orig := range map[string]string{".codex/config.toml": codex, ".continue/config.yaml": cont} {
		if got, _ := os.ReadFile(filepath.Join(home, filepath.FromSlash(rel))); string(got) != orig {
			t.Errorf("%s after wrap and unwrap:\n%s\nwant it unchanged:\n%s", rel, got, orig)
		}
	}
}
