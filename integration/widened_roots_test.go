package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client answers server-filesystem's roots/list with "/", which would
// widen the server's allowed directories to the whole machine; with every
// path bypass below the server then reads and writes outside its root.
// Through mcpguard and the shipped filesystem policy nothing outside the
// root is read, listed, written, moved or created, and the file names that
// look odd but are ordinary work end to end.

// widenedTree is a HOME whose src is the policy's root, with a directory
// outside it, a link out, and a link out whose name is NFC (é).
type widenedTree struct {
	home, root, outside string
}

func newWidenedTree(t *testing.T) widenedTree {
	t.Helper()
	home, root := shippedHome(t)
	tr := widenedTree{home: home, root: root, outside: filepath.Join(home, "outside")}
	if err := os.MkdirAll(tr.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.outside, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{"link_out", "\u00e9vil"} {
		if err := os.Symlink(tr.outside, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// widenedClient is a client whose roots are "/".
var widenedClient = &clientOpts{Roots: []*mcp.Root{{URI: "file:///", Name: "everything"}}}

// allowedDirs asks list_allowed_directories until the server has taken
// the client's roots/list answer (its text changes from the start-up
// directory), and returns it. The server takes the answer on its own
// time (it resolves each root first), so each reply tells whether it
// has: the test fails if none does within 20 s.
func allowedDirs(t *testing.T, cs *mcp.ClientSession, startup string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if got := callText(t, cs, "list_allowed_directories", nil); got != startup {
			return got
		}
	}
	t.Fatalf("the server never took the client's roots: still %q", startup)
	return ""
}

// TestWidenedRootsDirect shows the attack is real: without mcpguard the
// server takes "/" as its root and reads the file outside.
func TestWidenedRootsDirect(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-filesystem")
	tr := newWidenedTree(t)
	cs := connectDirectWith(t, widenedClient, bin, tr.root)
	startup := "Allowed directories:\n" + tr.root
	if got := allowedDirs(t, cs, startup); !strings.Contains(got, "Allowed directories:\n/") || strings.Contains(got, tr.root) {
		t.Fatalf("the server did not take the client's root /: %q", got)
	}
	for _, path := range []string{filepath.Join(tr.outside, "secret"), tr.root + "/missing/../link_out/secret"} {
		if got := callText(t, cs, "read_text_file", map[string]any{"path": path}); !strings.Contains(got, "s3cret") {
			t.Fatalf("direct read of %s: %q", path, truncate(got, 300))
		}
	}
}

func TestWidenedRootsGuarded(t *testing.T) {
	t.Parallel()
	requireGuard(t)
	bin := npmServer(t, "mcp-server-filesystem")
	tr := newWidenedTree(t)
	root, outside := tr.root, tr.outside
	// The server starts on a directory inside the root; the client answers
	// "/" and the root. mcpguard removes "/" from the answer, so the server
	// moves to the root alone, and that move tells the test the server has
	// taken the answer.
	start := filepath.Join(root, "start")
	if err := os.Mkdir(start, 0o755); err != nil {
		t.Fatal(err)
	}
	client := &clientOpts{Roots: []*mcp.Root{{URI: "file:///", Name: "everything"}, {URI: "file://" + root, Name: "project"}}}
	cs := connect(t, client, withEnv(guardArgv(t, &guardOpts{Policy: shippedPolicy("filesystem")}, bin, start), "HOME="+tr.home)...)
	if got := allowedDirs(t, cs, "Allowed directories:\n"+start); got != "Allowed directories:\n"+root {
		t.Fatalf("allowed directories after the client answered / and the root: %q", got)
	}

	reads := []map[string]any{
		{"path": filepath.Join(outside, "secret")},
		{"path": "../outside/secret"},
		{"path": "missing/../link_out/secret"},
		{"path": root + "/missing/../link_out/secret"},
		{"path": "a/b/../../link_out/secret"},
		{"path": "README.md/../link_out/secret"},
		{"path": "e\u0301vil/secret"},
		{"path": "\uFE30/outside/secret"},
		{"path": "src/../../outside/secret"},
		{"path": "$MCPGUARD_UNSET/" + strings.TrimPrefix(outside, "/") + "/secret"},
		{"path": "file://" + outside + "/secret"},
	}
	for _, args := range reads {
		callRefused(t, cs, "read_text_file", args)
	}
	callRefused(t, cs, "read_multiple_files", map[string]any{"paths": []any{"README.md", "m/../link_out/secret"}})
	callRefused(t, cs, "read_multiple_files", map[string]any{"paths": map[string]any{"0": filepath.Join(outside, "secret")}})
	callRefused(t, cs, "read_media_file", map[string]any{"path": "x/../link_out/secret"})
	callRefused(t, cs, "get_file_info", map[string]any{"path": "x/../link_out/secret"})
	for _, tool := range []string{"list_directory", "list_directory_with_sizes", "directory_tree"} {
		callRefused(t, cs, tool, map[string]any{"path": "x/../link_out"})
		callRefused(t, cs, tool, map[string]any{"path": "e\u0301vil"})
		callRefused(t, cs, tool, map[string]any{"path": "/"})
	}
	callRefused(t, cs, "search_files", map[string]any{"path": "x/../link_out", "pattern": "**/secret"})

	// Writes, moves and new directories outside.
	callRefused(t, cs, "write_file", map[string]any{"path": "new/../link_out/pwned.txt", "content": "x"})
	callRefused(t, cs, "write_file", map[string]any{"path": "e\u0301vil/pwned2.txt", "content": "x"})
	callRefused(t, cs, "edit_file", map[string]any{"path": "x/../link_out/secret", "edits": []any{map[string]any{"oldText": "s3cret", "newText": "gone"}}})
	callRefused(t, cs, "create_directory", map[string]any{"path": "x/../link_out/newdir"})
	callRefused(t, cs, "create_directory", map[string]any{"path": filepath.Join(outside, "newdir2")})
	callRefused(t, cs, "move_file", map[string]any{"source": "README.md", "destination": "m/../link_out/moved.md"})
	callRefused(t, cs, "move_file", map[string]any{"source": "m/../link_out/secret", "destination": "stolen.txt"})

	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "secret" {
		t.Errorf("the outside directory changed: %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "s3cret" {
		t.Errorf("the outside file changed: %q", b)
	}
	for _, f := range []string{"stolen.txt", "README.md"} {
		_, err := os.Stat(filepath.Join(root, f))
		if want := f == "README.md"; (err == nil) != want {
			t.Errorf("%s in the root: %v", f, err)
		}
	}

	// Ordinary names that look odd work end to end.
	if got := callText(t, cs, "create_directory", map[string]any{"path": "src/$lib"}); !strings.Contains(got, "Successfully") {
		t.Errorf("create_directory src/$lib: %q", got)
	}
	persian := "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.txt"
	for _, name := range []string{"Foo$Bar.class", "src/$lib/utils.ts", "backup-2024-01-01T10:00.txt", "std::vector.md", "~notes.txt", persian} {
		content := "content of " + name
		if got := callText(t, cs, "write_file", map[string]any{"path": name, "content": content}); !strings.Contains(got, "Successfully") {
			t.Errorf("write_file %q: %q", name, got)
			continue
		}
		if got := callText(t, cs, "read_text_file", map[string]any{"path": filepath.Join(root, name)}); got != content {
			t.Errorf("read_text_file %q: %q", name, got)
		}
		if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != content {
			t.Errorf("%q on disk: %q %v", name, b, err)
		}
	}
	if got := callText(t, cs, "move_file", map[string]any{"source": "std::vector.md", "destination": "backup-2024-01-02T10:00.md"}); !strings.Contains(got, "Successfully") {
		t.Errorf("move_file with colons: %q", got)
	}
}

// callRefused calls a tool and checks that mcpguard refused it (any
// INPUT_REJECTED code: path_scope, or the server's schema for a shape the
// server would not take).
func callRefused(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Errorf("call %s %v: %v (want a rejection result)", name, args, err)
		return
	}
	tc, _ := firstText(res)
	if !res.IsError || !strings.HasPrefix(tc, "Rejected unsafe MCP input: ") || !strings.HasPrefix(rejectionInText(t, tc).ErrorCode, "INPUT_REJECTED_") {
		t.Errorf("call %s %v: got %s, want mcpguard's rejection", name, args, truncate(mustJSON(toJSON(t, res)), 1500))
	}
}

func firstText(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) == 0 {
		return "", false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", false
	}
	return tc.Text, true
}
