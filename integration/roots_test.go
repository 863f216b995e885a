package integration

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRootWarningsAtStart: a path_scope root that does not exist and a
// directory in the server's argv that no root covers each give one
// warning line on stderr and in the log, before the first call.
func TestRootWarningsAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	served := filepath.Join(dir, "served")
	if err := os.Mkdir(served, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "typo")
	pol := writePolicy(t, "version: 1\ningress:\n  - fields: [path]\n    check: path_scope\n    roots: ["+missing+"]\n")
	logFile := filepath.Join(dir, "mcpguard.log")
	p := startGuardedRaw(t, &guardOpts{Policy: pol, Log: logFile}, testserverBin, served)
	p.initialize()
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	stderr := p.stderr.String()
	for _, want := range []string{
		"mcpguard: warning: path_scope root " + missing + " (ingress[0]) does not exist",
		"mcpguard: warning: the server's argument " + served + " is a directory that no path_scope root covers",
	} {
		if strings.Count(stderr, want) != 1 {
			t.Errorf("stderr has %d lines %q:\n%s", strings.Count(stderr, want), want, stderr)
		}
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), `"event":"warning"`); n != 2 {
		t.Errorf("%d warning lines in the log, want 2:\n%s", n, log)
	}
}

// TestClientRootsStatelessClient: a client of protocol revision
// 2026-07-28 never initializes; it declares the roots capability per
// request and answers input_required results by retrying the request
// with params.inputResponses. Under client_roots, mcpguard knows no root
// at its first call, so it asks the client for its roots itself; the
// retried call carries them, the test server (read_in_roots, a
// 2026-07-28 server that reads inside the roots it is given) reads with
// them, and a path outside them, or a root of "/", is refused by
// mcpguard before the server sees it.
func TestClientRootsStatelessClient(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	for name, text := range map[string]string{filepath.Join(project, "notes.txt"): "project notes\n", filepath.Join(outside, "secret.txt"): "outside secret\n"} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := writePolicy(t, "version: 1\ningress:\n  - tools: [read_in_roots]\n    fields: [path]\n    check: path_scope\n    client_roots: true\n")
	logFile, record := filepath.Join(dir, "mcpguard.log"), filepath.Join(dir, "record")
	p := startGuardedRaw(t, &guardOpts{Policy: pol, Log: logFile}, testserverBin, "-record", record)
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}}}

	// read calls read_in_roots as a 2026-07-28 client whose roots are
	// roots: it answers each input_required result's roots/list requests
	// and retries; it returns the final response and the keys it was
	// asked under, in order.
	read := func(id int, path string, roots ...string) (*rawMsg, []string) {
		t.Helper()
		var uris []any
		for _, r := range roots {
			uris = append(uris, map[string]any{"uri": "file://" + r})
		}
		params := map[string]any{"name": "read_in_roots", "arguments": map[string]any{"path": path}, "_meta": meta}
		var asked []string
		for round := 0; ; round++ {
			p.sendWait(request(id, "tools/call", params))
			m, _ := p.expect(strconv.Itoa(id), 10*time.Second)
			var r struct {
				ResultType    string `json:"resultType"`
				RequestState  string `json:"requestState"`
				InputRequests map[string]struct {
					Method string `json:"method"`
				} `json:"inputRequests"`
			}
			if m.Result == nil || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "input_required" {
				return m, asked
			}
			if round == 3 {
				t.Fatalf("still asked for input after %d retries: %s", round, m.raw)
			}
			answers := map[string]any{}
			for key, req := range r.InputRequests {
				if req.Method != "roots/list" {
					t.Fatalf("asked for %s: %s", req.Method, m.raw)
				}
				asked = append(asked, key)
				answers[key] = map[string]any{"roots": uris}
			}
			params = maps.Clone(params)
			params["inputResponses"] = answers
			if r.RequestState != "" {
				params["requestState"] = r.RequestState
			} else {
				delete(params, "requestState")
			}
		}
	}
	text := func(m *rawMsg) (string, bool) {
		var r struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if m.Result == nil || json.Unmarshal(m.Result, &r) != nil || len(r.Content) == 0 {
			return string(m.raw), true
		}
		return r.Content[0].Text, r.IsError
	}

	for i, path := range []string{"notes.txt", filepath.Join(project, "notes.txt")} {
		m, asked := read(i+1, path, project)
		if got, isErr := text(m); isErr || got != "project notes\n" || !slices.Equal(asked, []string{"mcpguard-roots"}) {
			t.Errorf("read %s in the project: %q (error %v), asked under %q; want the file, asked once by mcpguard", path, got, isErr, asked)
		}
	}
	secret := filepath.Join(outside, "secret.txt")
	m, _ := read(3, secret, project)
	if got, isErr := text(m); !isErr || !strings.Contains(got, "INPUT_REJECTED_PATH_SCOPE") || !strings.Contains(got, "Allowed roots: "+project+".") {
		t.Errorf("read outside the client's roots: %q; want mcpguard's INPUT_REJECTED_PATH_SCOPE naming the project", got)
	}
	m, _ = read(4, secret, "/")
	if got, isErr := text(m); !isErr || !strings.Contains(got, "INPUT_REJECTED_PATH_SCOPE") || !strings.Contains(got, "inputResponses") {
		t.Errorf("a client answering with the root /: %q; want mcpguard's refusal of inputResponses", got)
	}
	if _, err := p.closeAndWait(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if rec, _ := os.ReadFile(record); bytes.Contains(rec, []byte("secret.txt")) {
		t.Errorf("the server saw a refused read:\n%s", rec)
	}
	log, _ := os.ReadFile(logFile)
	if n := bytes.Count(log, []byte(`"event":"server_request"`)); n != 4 || !bytes.Contains(log, []byte(`"action":"asked"`)) {
		t.Errorf("%d lines say mcpguard asked for roots, want 4:\n%s", n, log)
	}
}
