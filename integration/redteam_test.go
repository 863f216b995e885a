package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedFilesystemWiderServer: server-filesystem started with a
// directory wider than the policy's root (HOME, with the root HOME/src)
// reads a relative path against that directory, so outside/secret is
// HOME/outside/secret to it. The direct run proves it reads the secret;
// behind the shipped policy the call is refused, while absolute paths
// inside the root still work.
func TestShippedFilesystemWiderServer(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	home, root := shippedHome(t)
	outside := filepath.Join(home, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	direct := connect(t, nil, bin, home)
	if got := callText(t, direct, "read_text_file", map[string]any{"path": "outside/secret"}); !strings.Contains(got, "s3cret") {
		t.Fatalf("direct server started with %s did not read outside/secret: %q (no attack on this server)", home, got)
	}

	cs := connect(t, nil, withEnv(guardArgv(t, &guardOpts{Policy: shippedPolicy("filesystem")}, bin, home), "HOME="+home)...)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"outside/secret", "./outside/secret", "src/../outside/secret"} {
		callRejected(t, cs, "read_text_file", map[string]any{"path": p}, "INPUT_REJECTED_PATH_SCOPE")
	}
	if got := callText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(root, "README.md")}); !strings.Contains(got, "# demo") {
		t.Errorf("read inside the root: %q", got)
	}
}
