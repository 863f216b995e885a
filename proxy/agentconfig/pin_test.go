package agentconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/policy/pins"
)

// writeNPX lays out what npx leaves in its cache for one spec: the
// directory's package.json naming the spec, and the installed package.
func writeNPX(t *testing.T, home, dir, spec, name, version string) {
	t.Helper()
	d := filepath.Join(home, ".npm", "_npx", dir)
	pkg := filepath.Join(d, "node_modules", filepath.FromSlash(name))
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(d, "package.json"), []byte(`{"dependencies": {"`+name+`": "^`+version+`"}, "_npx": {"packages": ["`+spec+`"]}}`), 0o644)
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name": "`+name+`", "version": "`+version+`", "bin": {"x": "x.js"}}`), 0o644)
}

// TestWrapPinVersions: --pin-versions pins an npx package given without
// an exact version to the one release npx installed for that very spec;
// a spec npx never installed, one whose cached installs disagree, a
// different spec of the same package and an already pinned one are left
// as they are; status then counts the pinned entry as pinned; unwrap
// takes mcpguard out and keeps the pin.
func TestWrapPinVersions(t *testing.T) {
	home := t.TempDir()
	t.Setenv("npm_config_cache", "")
	writeNPX(t, home, "0a1b2c3d4e5f6a7b", "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-filesystem", "2026.8.31")
	writeNPX(t, home, "1111111111111111", "@modelcontextprotocol/server-memory@latest", "@modelcontextprotocol/server-memory", "2026.1.1")
	writeNPX(t, home, "2222222222222222", "mcp-two", "mcp-two", "1.0.0")
	writeNPX(t, home, "3333333333333333", "mcp-two", "mcp-two", "2.0.0")
	config := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(config), 0o755)
	orig := `{
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]},
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "two": {"command": "npx", "args": ["mcp-two"]},
    "never": {"command": "npx", "args": ["-y", "mcp-never-installed"]},
    "pinned": {"command": "npx", "args": ["-y", "mcp-pinned@3.2.1"]}
  }
}
`
	if err := os.WriteFile(config, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(home)
	o.PinVersions = true
	var out, errw bytes.Buffer
	if text(Wrap(o), &out, &errw) {
		t.Fatalf("wrap failed\n%s%s", out.String(), errw.String())
	}
	got, _ := os.ReadFile(config)
	want := strings.NewReplacer(
		`"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]`,
		`"command": "`+testExe+`", "args": ["--server-name", "cursor-fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/srv"]`,
		`"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]`,
		`"command": "`+testExe+`", "args": ["--server-name", "cursor-memory", "--", "npx", "-y", "@modelcontextprotocol/server-memory"]`,
		`"command": "npx", "args": ["mcp-two"]`,
		`"command": "`+testExe+`", "args": ["--server-name", "cursor-two", "--", "npx", "mcp-two"]`,
		`"command": "npx", "args": ["-y", "mcp-never-installed"]`,
		`"command": "`+testExe+`", "args": ["--server-name", "cursor-never", "--", "npx", "-y", "mcp-never-installed"]`,
		`"command": "npx", "args": ["-y", "mcp-pinned@3.2.1"]`,
		`"command": "`+testExe+`", "args": ["--server-name", "cursor-pinned", "--", "npx", "-y", "mcp-pinned@3.2.1"]`,
	).Replace(orig)
	if string(got) != want {
		t.Fatalf("wrapped:\n%s\nwant:\n%s\n%s", got, want, out.String())
	}
	for _, line := range []string{
		"pinned @modelcontextprotocol/server-filesystem@2026.8.31 (the release npx installed)",
		"memory  wrapped  policy: baseline; not pinned: no single release installed by npx found",
		"two     wrapped  policy: baseline; not pinned",
		"never   wrapped  policy: baseline; not pinned",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, out.String())
		}
	}
	if strings.Contains(out.String(), "mcp-pinned@3.2.1 (the release") {
		t.Errorf("an exact version was pinned again:\n%s", out.String())
	}
	st := Status(o, StatusOptions{})
	if st.Unpinned != 3 {
		t.Errorf("status counts %d unpinned, want memory, two and never\n%s", st.Unpinned, st.String())
	}
	if text(Unwrap(o), &out, &errw) {
		t.Fatalf("unwrap failed\n%s%s", out.String(), errw.String())
	}
	got, _ = os.ReadFile(config)
	if want := strings.Replace(orig, `"@modelcontextprotocol/server-filesystem",`, `"@modelcontextprotocol/server-filesystem@2026.8.31",`, 1); string(got) != want {
		t.Errorf("after unwrap:\n%s\nwant the original with the pin kept", got)
	}
}

// TestStaleLock: a lock written before the server's program changed
// (the binary, the script an interpreter runs, the package npx
// installed) is stale; one written after it is not; a server whose
// program cannot be known without running anything (uvx) is never
// called stale; status flags it in the lock column, a note and the
// summary.
func TestStaleLock(t *testing.T) {
	home := t.TempDir()
	t.Setenv("npm_config_cache", "")
	dir := filepath.Join(home, "pol")
	os.MkdirAll(dir, 0o755)
	pol := filepath.Join(dir, "p.yaml")
	os.WriteFile(pol, []byte("version: 1\npins: p.lock.yaml\n"), 0o644)
	lock := filepath.Join(dir, "p.lock.yaml")
	if err := pins.NewLock().WriteFile(lock); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(home, "bin", "server")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	script := filepath.Join(home, "srv.js")
	os.WriteFile(script, nil, 0o644)
	writeNPX(t, home, "0a1b2c3d4e5f6a7b", "mcp-thing", "mcp-thing", "1.2.3")
	npxPkg := filepath.Join(home, ".npm", "_npx", "0a1b2c3d4e5f6a7b", "node_modules", "mcp-thing", "package.json")

	past, now := time.Now().Add(-time.Hour), time.Now()
	setTimes := func(lockAt, progAt time.Time) {
		os.Chtimes(lock, lockAt, lockAt)
		for _, p := range []string{bin, script, npxPkg} {
			os.Chtimes(p, progAt, progAt)
		}
	}
	argvs := map[string][]string{
		"binary": {bin, "--stdio"},
		"script": {"node", script},
		"npx":    {"npx", "-y", "mcp-thing"},
		"uvx":    {"uvx", "mcp-server-time"},
	}
	setTimes(past, now)
	for name, argv := range argvs {
		why := StaleLock(Server{Kind: Guarded, Policy: pol, Argv: argv}, home)
		if (why == "") != (name == "uvx") {
			t.Errorf("%s: StaleLock = %q with the program newer than the lock", name, why)
		}
	}
	setTimes(now, past)
	for name, argv := range argvs {
		if why := StaleLock(Server{Kind: Guarded, Policy: pol, Argv: argv}, home); why != "" {
			t.Errorf("%s: StaleLock = %q with the lock newer than the program", name, why)
		}
	}

	setTimes(past, now)
	config := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(config), 0o755)
	exe := filepath.Join(home, "bin", "mcpguard")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(config, []byte(`{"mcpServers": {"b": {"command": "`+exe+`", "args": ["--policy", "`+pol+`", "--", "`+bin+`"]}}}`), 0o644)
	o := testOptions(home)
	o.Exe = exe
	r := Status(o, StatusOptions{})
	out := r.String()
	if r.Stale != 1 || !strings.Contains(out, "0 tools, STALE") || !strings.Contains(out, "b: stale lock: ~/bin/server changed (") ||
		!strings.Contains(out, "1 have a lock older than their program") {
		t.Errorf("status does not flag the stale lock (%d):\n%s", r.Stale, out)
	}
}
