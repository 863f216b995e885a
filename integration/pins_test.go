package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool poisoning and rug pulls: a server changes what it shows the model
// after the user approved it. testserver -pinnable lists tools, a prompt,
// a resource and a template; -pulled serves the changed variant from the
// start (a change between runs), -pull-after 1 from the second list on,
// and its rug_pull tool switches with list_changed notifications.

const (
	codeChanged  = "INPUT_REJECTED_TOOL_CHANGED"
	codeUnpinned = "INPUT_REJECTED_TOOL_UNPINNED"
)

type listing struct {
	tools, prompts, resources, templates []string
	instructions                         string
}

func listAll(t *testing.T, cs *mcp.ClientSession) listing {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var l listing
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		l.tools = append(l.tools, tool.Name)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		l.prompts = append(l.prompts, p.Name)
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		l.resources = append(l.resources, r.URI)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		l.templates = append(l.templates, r.URITemplate)
	}
	l.instructions = cs.InitializeResult().Instructions
	return l
}

// callRejected calls a tool and returns the rejection's code, "" when the
// call was not rejected.
func pinCallRejected(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if !res.IsError {
		return ""
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("call %s: %s", name, mustJSON(res))
	}
	return rejectionInText(t, tc.Text).ErrorCode
}

// rpcRejected returns the rejection code in a JSON-RPC error's data.
func rpcRejected(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	var r rejection
	if json.Unmarshal(we.Data, &r) != nil {
		t.Fatalf("error data is not a rejection: %s", we.Data)
	}
	return r.ErrorCode
}

// pinEvents reads the pin lines of a decision log.
type pinEvent struct {
	Event         string   `json:"event"`
	Kind          string   `json:"kind"`
	Tool          string   `json:"tool"`
	Action        string   `json:"action"`
	ErrorCode     string   `json:"error_code"`
	ChangedFields []string `json:"changed_fields"`
	Findings      []string `json:"findings"`
	Message       string   `json:"message"`
}

func pinEvents(t *testing.T, logFile string) []pinEvent {
	t.Helper()
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []pinEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e pinEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Event == "pin" {
			out = append(out, e)
		}
	}
	return out
}

// wantPinEvent finds the event for an item, failing when there is none.
func wantPinEvent(t *testing.T, evs []pinEvent, kind, name, action, code string, fields ...string) {
	t.Helper()
	for _, e := range evs {
		if e.Kind == kind && e.Tool == name && e.Action == action && e.ErrorCode == code && (len(fields) == 0 || slices.Equal(e.ChangedFields, fields)) {
			return
		}
	}
	t.Errorf("no pin event %s %s %s %s %v in the log; have:\n%s", kind, name, action, code, fields, mustJSON(evs))
}

func without(list []string, drop ...string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestPinsFirstSight: without a lock file (the baseline), each session
// pins what it sees first; a definition that changes later in the session,
// after list_changed or without notice, is withheld and its calls refused.
func TestPinsFirstSight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		server  []string
		trigger bool // call rug_pull (list_changed) rather than -pull-after
		audit   bool
	}{
		{"after list_changed", []string{testserverBin, "-pinnable"}, true, false},
		{"without notice", []string{testserverBin, "-pull-after", "1"}, false, false},
		{"audit", []string{testserverBin, "-pull-after", "1"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "mcpguard.log")
			o := &guardOpts{Log: logFile}
			if tc.audit {
				o.Args = []string{"--mode", "audit"}
			}
			cs := connectGuarded(t, o, tc.server...)
			first := listAll(t, cs)
			for _, want := range []string{"echo", "slow", "rug_pull"} {
				if !slices.Contains(first.tools, want) {
					t.Fatalf("first list lacks %s: %v", want, first.tools)
				}
			}
			if len(first.prompts) != 1 || len(first.resources) != 1 || len(first.templates) != 1 {
				t.Fatalf("first lists: %+v", first)
			}
			if tc.trigger {
				callText(t, cs, "rug_pull", nil)
			}
			second := listAll(t, cs)
			if tc.audit {
				if !slices.Contains(second.tools, "echo") || len(second.prompts) != 1 || len(second.resources) != 1 {
					t.Errorf("audit withheld items: %+v", second)
				}
				if code := pinCallRejected(t, cs, "echo"); code != "" {
					t.Errorf("audit refused echo: %s", code)
				}
				evs := pinEvents(t, logFile)
				wantPinEvent(t, evs, "tool", "echo", "audited", codeChanged, "description")
				return
			}
			if slices.Contains(second.tools, "echo") || len(second.prompts) != 0 || len(second.resources) != 0 {
				t.Errorf("changed items still listed: %+v", second)
			}
			for _, want := range []string{"slow_v2", "late", "rug_pull"} { // new names: allowed, logged
				if !slices.Contains(second.tools, want) {
					t.Errorf("second list lacks %s: %v", want, second.tools)
				}
			}
			if !slices.Equal(second.templates, []string{"test://items/{id}"}) {
				t.Errorf("templates: %v", second.templates)
			}
			if code := pinCallRejected(t, cs, "echo"); code != codeChanged {
				t.Errorf("call echo: %q, want %s", code, codeChanged)
			}
			if got := callText(t, cs, "late", nil); got != "ran late" {
				t.Errorf("call late: %q", got)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "x"}})
			if code := rpcRejected(t, err); code != codeChanged {
				t.Errorf("prompts/get greet: %q (%v)", code, err)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://doc"})
			if code := rpcRejected(t, err); code != codeChanged {
				t.Errorf("resources/read test://doc: %q (%v)", code, err)
			}
			evs := pinEvents(t, logFile)
			wantPinEvent(t, evs, "tool", "echo", "withheld", codeChanged, "description")
			wantPinEvent(t, evs, "prompt", "greet", "withheld", codeChanged, "arguments")
			wantPinEvent(t, evs, "resource", "test://doc", "withheld", codeChanged, "description")
			wantPinEvent(t, evs, "tool", "late", "allowed", "")
			wantPinEvent(t, evs, "tool", "slow_v2", "allowed", "")
		})
	}
}

// pinnedPolicy writes a policy with pins: and pins testserver -pinnable.
func pinnedPolicy(t *testing.T, mode string, server ...string) (policyFile, lockFile string) {
	t.Helper()
	dir := t.TempDir()
	policyFile = filepath.Join(dir, "test.yaml")
	lockFile = filepath.Join(dir, "test.lock.yaml")
	text := "version: 1\npins: test.lock.yaml\n"
	if mode != "" {
		text += "mode: " + mode + "\n"
	}
	if err := os.WriteFile(policyFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, status := runGuardCmd(t, append([]string{"pin", "--policy", policyFile, "--"}, server...)...)
	if status != 0 {
		t.Fatalf("pin: status %d\n%s", status, out)
	}
	return policyFile, lockFile
}

// TestPinCommand: pin writes the lock, --diff reports nothing for the same
// server and every change, field by field, for the pulled one.
func TestPinCommand(t *testing.T) {
	t.Parallel()
	policyFile, lockFile := pinnedPolicy(t, "", testserverBin, "-pinnable")
	lock, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"version: 2", "instructions:", "server_info:", "tools:", "  echo:", "prompts:", "resources:", "resource_templates:", "digest: sha256:"} {
		if !strings.Contains(string(lock), want) {
			t.Errorf("lock file lacks %q:\n%s", want, lock)
		}
	}
	if out, status := runGuardCmd(t, "pin", "--diff", "--policy", policyFile, "--", testserverBin, "-pinnable"); status != 0 || out != "" {
		t.Errorf("diff of the same server: status %d\n%s", status, out)
	}
	out, status := runGuardCmd(t, "pin", "--diff", "--lock", lockFile, "--", testserverBin, "-pulled")
	if status != 1 {
		t.Errorf("diff of the pulled server: status %d, want 1", status)
	}
	for _, want := range []string{
		"instructions: changed", `tool "echo": changed`, `  "description":`, "<IMPORTANT>",
		`tool "slow": removed`, `tool "slow_v2": new`, `tool "late": new`,
		`tool "notes_delete_all": changed`, `  "_meta":`, `"visibility":["model","app"]`,
		`prompt "greet": changed`, `  "arguments":`, `resource "test://doc": changed`,
		`resource template "test://item/{id}": removed`, `resource template "test://items/{id}": new`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	if after, _ := os.ReadFile(lockFile); !bytes.Equal(after, lock) {
		t.Error("pin --diff changed the lock file")
	}
	// Accepting the change is running pin again.
	if out, status := runGuardCmd(t, "pin", "--lock", lockFile, "--", testserverBin, "-pulled"); status != 0 {
		t.Fatalf("pin again: %d\n%s", status, out)
	}
	if out, status := runGuardCmd(t, "pin", "--diff", "--lock", lockFile, "--", testserverBin, "-pulled"); status != 0 {
		t.Errorf("diff after accepting: status %d\n%s", status, out)
	}
	if _, status := runGuardCmd(t, "pin", "--diff", "--lock", filepath.Join(t.TempDir(), "none.yaml"), "--", testserverBin); status != 2 {
		t.Errorf("diff without a lock file: status %d, want 2", status)
	}
}

// TestPinsLockEnforced: with a lock file, a server changed between runs
// gets its changed items withheld (CHANGED), its new and renamed ones too
// (UNPINNED), and its instructions replaced by the pinned ones.
func TestPinsLockEnforced(t *testing.T) {
	t.Parallel()
	policyFile, _ := pinnedPolicy(t, "", testserverBin, "-pinnable")
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	cs := connectGuarded(t, &guardOpts{Policy: policyFile, Log: logFile}, testserverBin, "-pulled")
	l := listAll(t, cs)
	if l.instructions != "Test server for mcpguard. Call echo to check the relay." {
		t.Errorf("instructions not replaced by the pinned ones: %q", l.instructions)
	}
	for _, gone := range []string{"echo", "slow_v2", "late"} {
		if slices.Contains(l.tools, gone) {
			t.Errorf("%s is listed: %v", gone, l.tools)
		}
	}
	if !slices.Contains(l.tools, "huge") || !slices.Contains(l.tools, "rug_pull") {
		t.Errorf("unchanged tools missing: %v", l.tools)
	}
	if len(l.prompts)+len(l.resources)+len(l.templates) != 0 {
		t.Errorf("changed prompts, resources or templates listed: %+v", l)
	}
	for name, want := range map[string]string{"echo": codeChanged, "slow_v2": codeUnpinned, "late": codeUnpinned, "never_listed": codeUnpinned} {
		if code := pinCallRejected(t, cs, name); code != want {
			t.Errorf("call %s: %q, want %s", name, code, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "x"}})
	if code := rpcRejected(t, err); code != codeChanged {
		t.Errorf("prompts/get greet: %q", code)
	}
	evs := pinEvents(t, logFile)
	wantPinEvent(t, evs, "tool", "echo", "withheld", codeChanged, "description")
	wantPinEvent(t, evs, "tool", "slow_v2", "withheld", codeUnpinned)
	wantPinEvent(t, evs, "prompt", "greet", "withheld", codeChanged, "arguments")
	wantPinEvent(t, evs, "resource template", "test://items/{id}", "withheld", codeUnpinned)
	wantPinEvent(t, evs, "instructions", "", "replaced", codeChanged, "instructions")
	for _, e := range evs {
		if e.Tool == "echo" && len(e.Findings) == 0 {
			t.Errorf("the poisoned echo has no lint findings in its log line: %+v", e)
		}
	}
}

// TestPinsLockAudit: mode: audit logs what would be withheld and relays it.
func TestPinsLockAudit(t *testing.T) {
	t.Parallel()
	policyFile, _ := pinnedPolicy(t, "audit", testserverBin, "-pinnable")
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	guarded := listAll(t, connectGuarded(t, &guardOpts{Policy: policyFile, Log: logFile}, testserverBin, "-pulled"))
	direct := listAll(t, connectDirect(t, testserverBin, "-pulled"))
	if mustJSON(guarded.tools) != mustJSON(direct.tools) || mustJSON(guarded.prompts) != mustJSON(direct.prompts) ||
		guarded.instructions != direct.instructions || mustJSON(guarded.templates) != mustJSON(direct.templates) {
		t.Errorf("audit changed what the client sees:\nguarded %+v\ndirect  %+v", guarded, direct)
	}
	evs := pinEvents(t, logFile)
	wantPinEvent(t, evs, "tool", "echo", "audited", codeChanged, "description")
	wantPinEvent(t, evs, "tool", "late", "audited", codeUnpinned)
	wantPinEvent(t, evs, "instructions", "", "audited", codeChanged, "instructions")
}

// TestPinsUnchangedByteForByte: a server that matches its lock is relayed
// byte for byte: initialize and every list.
func TestPinsUnchangedByteForByte(t *testing.T) {
	t.Parallel()
	policyFile, _ := pinnedPolicy(t, "", testserverBin, "-pinnable")
	exchange := func(p *rawProc) []string {
		p.sendWait(request(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "raw", "version": "1"}}))
		init, _ := p.expect("1", 20*time.Second)
		p.sendWait(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		out := []string{string(init.raw)}
		for i, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list", "tools/list"} {
			p.sendWait(request(i+2, method, map[string]any{}))
			m, _ := p.expect(strings.TrimSpace(mustJSON(i+2)), 20*time.Second)
			out = append(out, string(m.raw))
		}
		return out
	}
	direct := exchange(startRaw(t, testserverBin, "-pinnable"))
	guarded := exchange(startGuardedRaw(t, &guardOpts{Policy: policyFile}, testserverBin, "-pinnable"))
	baseline := exchange(startGuardedRaw(t, nil, testserverBin, "-pinnable"))
	for i := range direct {
		if guarded[i] != direct[i] {
			t.Errorf("with a lock, message %d differs:\nguarded %s\ndirect  %s", i, truncate(guarded[i], 300), truncate(direct[i], 300))
		}
		if baseline[i] != direct[i] {
			t.Errorf("baseline, message %d differs:\nguarded %s\ndirect  %s", i, truncate(baseline[i], 300), truncate(direct[i], 300))
		}
	}
}

// TestPinsEverything: the real server-everything announces tools by what
// the client can do (sampling, elicitation, roots). mcpguard pin
// announces all of it, so its lock holds every tool a client can make the
// server show. A tool the lock lacks (dropped from it here, as a tool the
// server gains after pinning would be) is withheld and refused; the
// pinned ones are relayed and work.
func TestPinsEverything(t *testing.T) {
	t.Parallel()
	server := npmServer(t, "mcp-server-everything")
	dir := t.TempDir()
	lockFile := filepath.Join(dir, "everything.lock.yaml")
	policyFile := filepath.Join(dir, "everything.yaml")
	os.WriteFile(policyFile, []byte("version: 1\npins: everything.lock.yaml\n"), 0o644)
	if out, status := runGuardCmd(t, "pin", "--lock", lockFile, "--", server); status != 0 {
		t.Fatalf("pin: %d\n%s", status, out)
	}
	if out, status := runGuardCmd(t, "pin", "--diff", "--lock", lockFile, "--", server); status != 0 {
		t.Errorf("server-everything changed between two runs of pin:\n%s", out)
	}
	lock, _ := os.ReadFile(lockFile)
	direct := listAll(t, connectDirect(t, server))
	for _, name := range direct.tools {
		if !strings.Contains(string(lock), "\n  "+name+":\n") {
			t.Errorf("the lock lacks %s, which the test client makes server-everything show", name)
		}
	}
	unpinned := []string{"get-roots-list"}
	if !slices.Contains(direct.tools, unpinned[0]) {
		t.Fatalf("server-everything shows no %s to the test client: %v", unpinned[0], direct.tools)
	}
	if err := os.WriteFile(lockFile, dropLockItem(t, lock, unpinned[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, status := runGuardCmd(t, "pin", "--diff", "--lock", lockFile, "--", server); status != 1 ||
		!strings.Contains(out, `tool "`+unpinned[0]+`": new (not in the lock)`) {
		t.Errorf("pin --diff after dropping %s: status %d\n%s", unpinned[0], status, out)
	}
	// Each mode has its own relay and log; the lock is only read.
	modes := &atOnce{t: t}
	for _, mode := range []string{"enforce", "audit"} {
		modes.Run(mode, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "mcpguard.log")
			cs := connectGuarded(t, &guardOpts{Policy: policyFile, Log: logFile, Args: []string{"--mode", mode}}, server)
			guarded := listAll(t, cs)
			want := without(direct.tools, unpinned...)
			if mode == "audit" {
				want = direct.tools
			}
			if mustJSON(guarded.tools) != mustJSON(want) {
				t.Errorf("tools: %v, want %v (unpinned %v)", guarded.tools, want, unpinned)
			}
			if mustJSON(guarded.prompts) != mustJSON(direct.prompts) || mustJSON(guarded.resources) != mustJSON(direct.resources) ||
				guarded.instructions != direct.instructions {
				t.Errorf("prompts, resources or instructions differ:\nguarded %+v\ndirect  %+v", guarded, direct)
			}
			if got := callText(t, cs, "echo", map[string]any{"message": "pinned"}); !strings.Contains(got, "pinned") {
				t.Errorf("echo: %q", got)
			}
			code := pinCallRejected(t, cs, unpinned[0])
			evs := pinEvents(t, logFile)
			if mode == "enforce" {
				if code != codeUnpinned {
					t.Errorf("call %s: %q, want %s", unpinned[0], code, codeUnpinned)
				}
				wantPinEvent(t, evs, "tool", unpinned[0], "withheld", codeUnpinned)
			} else {
				wantPinEvent(t, evs, "tool", unpinned[0], "audited", codeUnpinned)
			}
		})
	}
	modes.Run("no lock", func(t *testing.T) {
		guarded := listAll(t, connectGuarded(t, nil, server))
		if mustJSON(guarded) != mustJSON(direct) {
			t.Errorf("baseline changed the lists:\nguarded %+v\ndirect  %+v", guarded, direct)
		}
	})
	modes.Wait()
}

// dropLockItem removes the item name (a plain YAML key) from the text
// of a lock file, as if it had never been pinned.
func dropLockItem(t *testing.T, lock []byte, name string) []byte {
	t.Helper()
	var out []string
	dropping, dropped := false, false
	for _, line := range strings.SplitAfter(string(lock), "\n") {
		if line == "  "+name+":\n" {
			dropping, dropped = true, true
			continue
		}
		if dropping && !strings.HasPrefix(line, "   ") {
			dropping = false
		}
		if !dropping {
			out = append(out, line)
		}
	}
	if !dropped {
		t.Fatalf("the lock has no item %s", name)
	}
	return []byte(strings.Join(out, ""))
}

// pinsClientOut is what pinsclient.mjs printed.
type pinsClientOut struct {
	Instructions *string  `json:"instructions"`
	Tools        []string `json:"tools"`
	Prompts      []string `json:"prompts"`
	Resources    []string `json:"resources"`
	Templates    []string `json:"templates"`
	Calls        []struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"calls"`
	Relist *struct {
		Tools     []string `json:"tools"`
		Prompts   []string `json:"prompts"`
		Resources []string `json:"resources"`
	} `json:"relist"`
	Gets []struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"gets"`
}

func runPinsClient(t *testing.T, argv []string, calls []string, prompts []string) pinsClientOut {
	return runPinsClientSpec(t, argv, calls, prompts, false)
}

func runPinsClientSpec(t *testing.T, argv []string, calls []string, prompts []string, relist bool) pinsClientOut {
	t.Helper()
	var cs []map[string]any
	for _, c := range calls {
		cs = append(cs, map[string]any{"name": c})
	}
	stdout := runNodeClient(t, "pinsclient.mjs", map[string]any{"command": argv[0], "args": argv[1:], "env": map[string]string{"PATH": os.Getenv("PATH")},
		"calls": cs, "prompts": prompts, "relist": relist})
	var out pinsClientOut
	if err := json.Unmarshal(stdout, &out); err != nil {
		t.Fatalf("pinsclient printed %q: %v", stdout, err)
	}
	return out
}

// TestPinsTypeScriptClient: the official TypeScript SDK client, through
// mcpguard with a lock, against the server changed between runs.
func TestPinsTypeScriptClient(t *testing.T) {
	t.Parallel()
	policyFile, _ := pinnedPolicy(t, "", testserverBin, "-pinnable")
	for _, mode := range []string{"enforce", "audit"} {
		t.Run(mode, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "mcpguard.log")
			argv := guardArgv(t, &guardOpts{Policy: policyFile, Log: logFile, Args: []string{"--mode", mode}}, testserverBin, "-pulled")
			out := runPinsClient(t, argv, []string{"echo", "late", "huge"}, []string{"greet"})
			direct := runPinsClient(t, []string{testserverBin, "-pulled"}, nil, nil)
			if mode == "audit" {
				if mustJSON(out.Tools) != mustJSON(direct.Tools) || mustJSON(out.Prompts) != mustJSON(direct.Prompts) {
					t.Errorf("audit changed the lists: %+v", out)
				}
				for i, c := range out.Calls {
					if c.Result == nil || c.Result.IsError {
						t.Errorf("audit: call %d refused: %s", i, mustJSON(c))
					}
				}
				wantPinEvent(t, pinEvents(t, logFile), "tool", "echo", "audited", codeChanged, "description")
				return
			}
			if out.Instructions == nil || *out.Instructions != "Test server for mcpguard. Call echo to check the relay." {
				t.Errorf("instructions: %v", out.Instructions)
			}
			if slices.Contains(out.Tools, "echo") || slices.Contains(out.Tools, "late") || len(out.Prompts) != 0 || len(out.Resources) != 0 || len(out.Templates) != 0 {
				t.Errorf("withheld items listed: %+v", out)
			}
			if want := without(direct.Tools, "echo", "late", "slow_v2", "notes_delete_all"); mustJSON(out.Tools) != mustJSON(want) {
				t.Errorf("tools %v, want %v", out.Tools, want)
			}
			// An MCP Apps tool made visible to the model through _meta is
			// withheld like a changed description.
			wantPinEvent(t, pinEvents(t, logFile), "tool", "notes_delete_all", "withheld", codeChanged, "_meta")
			for i, want := range []string{codeChanged, codeUnpinned, ""} {
				c := out.Calls[i]
				if c.Result == nil {
					t.Errorf("call %d threw: %s", i, mustJSON(c))
					continue
				}
				got := ""
				if c.Result.IsError {
					got = rejectionInText(t, c.Result.Content[0].Text).ErrorCode
				}
				if got != want {
					t.Errorf("call %d: %q, want %q", i, got, want)
				}
			}
			if g := out.Gets[0]; g.Error == nil || !strings.Contains(g.Error.Message, "differs from its pin") {
				t.Errorf("getPrompt greet: %s", mustJSON(g))
			}
		})
	}
}

// TestPinsTypeScriptClientFirstSight: without a lock file, the TypeScript
// SDK client lists twice in one session; the server changes in between
// without notice.
func TestPinsTypeScriptClientFirstSight(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"enforce", "audit"} {
		t.Run(mode, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "mcpguard.log")
			argv := guardArgv(t, &guardOpts{Log: logFile, Args: []string{"--mode", mode}}, testserverBin, "-pull-after", "1")
			// ECHO, "echo " and a Cyrillic е: names a server matching
			// loosely resolves to the withheld echo.
			out := runPinsClientSpec(t, argv, []string{"echo", "late", "ECHO", "echo ", "\u0435cho"}, []string{"greet"}, true)
			if !slices.Contains(out.Tools, "echo") || out.Relist == nil {
				t.Fatalf("first list: %+v", out)
			}
			if mode == "audit" {
				if !slices.Contains(out.Relist.Tools, "echo") || len(out.Relist.Prompts) != 1 || out.Calls[0].Result == nil || out.Calls[0].Result.IsError {
					t.Errorf("audit withheld or refused: %s", mustJSON(out))
				}
				wantPinEvent(t, pinEvents(t, logFile), "tool", "echo", "audited", codeChanged, "description")
				return
			}
			if slices.Contains(out.Relist.Tools, "echo") || !slices.Contains(out.Relist.Tools, "late") || len(out.Relist.Prompts) != 0 || len(out.Relist.Resources) != 0 {
				t.Errorf("second list: %+v", out.Relist)
			}
			if c := out.Calls[0]; c.Result == nil || !c.Result.IsError || rejectionInText(t, c.Result.Content[0].Text).ErrorCode != codeChanged {
				t.Errorf("call echo: %s", mustJSON(c))
			}
			if c := out.Calls[1]; c.Result == nil || c.Result.IsError {
				t.Errorf("call late (new, allowed): %s", mustJSON(c))
			}
			for _, c := range out.Calls[2:] {
				if c.Result == nil || !c.Result.IsError || rejectionInText(t, c.Result.Content[0].Text).ErrorCode != codeChanged {
					t.Errorf("a loose spelling of echo: %s", mustJSON(c))
				}
			}
			if g := out.Gets[0]; g.Error == nil || !strings.Contains(g.Error.Message, "differs from its pin") {
				t.Errorf("getPrompt greet: %s", mustJSON(g))
			}
			evs := pinEvents(t, logFile)
			wantPinEvent(t, evs, "tool", "echo", "withheld", codeChanged, "description")
			wantPinEvent(t, evs, "tool", "late", "allowed", "")
		})
	}
}
