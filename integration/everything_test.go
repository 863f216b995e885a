package integration

import (
	"context"
	"encoding/base64"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingCalls are tools/call requests to server-everything whose
// results are deterministic once normalised (see normalise).
var everythingCalls = []struct {
	name string
	args map[string]any
}{
	{"echo", map[string]any{"message": "hello through mcpguard: ünïcödé, 漢字, emoji 👍, `code`"}},
	{"get-sum", map[string]any{"a": 2, "b": 3.5}},
	{"get-sum", map[string]any{"a": 9007199254740991, "b": -1}},
	{"get-tiny-image", map[string]any{}},
	{"get-annotated-message", map[string]any{"messageType": "error", "includeImage": true}},
	{"get-structured-content", map[string]any{"location": "Chicago"}},
	{"get-resource-links", map[string]any{"count": 3}},
	{"get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 2}},
	{"get-roots-list", map[string]any{}},                                         // answered from the client's roots/list reply
	{"trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 5}}, // server→client sampling/createMessage
	{"trigger-elicitation-request", map[string]any{}},                            // server→client elicitation/create
	{"no-such-tool", map[string]any{}},                                           // an error result
}

// timestamp matches the only time-dependent text server-everything sends:
// its text and blob resources say "created at <toLocaleTimeString()>".
var timestamp = regexp.MustCompile(`created at [0-9]{1,2}:[0-9]{2}:[0-9]{2}( ?[AP]M)?`)

// normalise replaces the time-dependent parts of a server-everything
// message (the resource timestamps, also inside base64 blobs) so that two
// runs can be compared exactly. Nothing else is touched.
func normalise(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "blob" {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil && timestamp.Match(b) {
					v[k] = "base64:" + timestamp.ReplaceAllString(string(b), "created at <time>")
					continue
				}
			}
			v[k] = normalise(x)
		}
		return v
	case []any:
		for i := range v {
			v[i] = normalise(v[i])
		}
		return v
	case string:
		return timestamp.ReplaceAllString(v, "created at <time>")
	}
	return v
}

// everythingRun is everything a scenario observed, as normalised JSON.
type everythingRun struct {
	Init      any
	Tools     any
	Prompts   any
	Resources any
	Templates any
	Read      any
	Calls     []any
	Progress  []float64
	Sampling  int
	Elicit    int
}

// runEverything drives one session with server-everything through a fixed
// scenario: initialize, the lists, a resource read, every call of
// everythingCalls, and a progress-notifying long-running operation.
func runEverything(t *testing.T, cs *mcp.ClientSession) *everythingRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	run := &everythingRun{}
	run.Init = normalise(toJSON(t, cs.InitializeResult()))

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, c := range everythingCalls {
		if !names[c.name] && c.name != "no-such-tool" {
			t.Fatalf("server-everything has no tool %q (has %v)", c.name, names)
		}
	}
	run.Tools = normalise(toJSON(t, tools))
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	run.Prompts = normalise(toJSON(t, prompts))
	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	run.Resources = normalise(toJSON(t, resources))
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	run.Templates = normalise(toJSON(t, templates))
	if len(resources.Resources) > 0 {
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.Resources[0].URI})
		if err != nil {
			t.Fatalf("resources/read %s: %v", resources.Resources[0].URI, err)
		}
		run.Read = normalise(toJSON(t, read))
	}

	for _, c := range everythingCalls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			// A JSON-RPC error is part of the observed behaviour too.
			run.Calls = append(run.Calls, map[string]any{"tool": c.name, "error": err.Error()})
			continue
		}
		run.Calls = append(run.Calls, map[string]any{"tool": c.name, "result": normalise(toJSON(t, res))})
	}

	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 5}}
	params.SetProgressToken("progress-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("trigger-long-running-operation: %v", err)
	}
	run.Calls = append(run.Calls, map[string]any{"tool": params.Name, "result": normalise(toJSON(t, res))})
	rec := recorderOf(cs)
	rec.waitFor(t, "5 progress notifications", func() bool { return len(rec.progress["progress-1"]) >= 5 })
	rec.mu.Lock()
	run.Progress = append(run.Progress, rec.progress["progress-1"]...)
	run.Sampling, run.Elicit = len(rec.sampling), len(rec.elicit)
	rec.mu.Unlock()
	return run
}

// checkEverythingRun checks what any correct run must show, so that a
// comparison of two runs cannot pass on two equally broken ones.
func checkEverythingRun(t *testing.T, run *everythingRun) {
	t.Helper()
	if got := len(run.Progress); got != 5 {
		t.Errorf("progress notifications: got %d (%v), want 5", got, run.Progress)
	}
	if run.Sampling != 1 {
		t.Errorf("sampling/createMessage requests answered by the client: %d, want 1", run.Sampling)
	}
	if run.Elicit != 1 {
		t.Errorf("elicitation/create requests answered by the client: %d, want 1", run.Elicit)
	}
	calls := mustJSON(run.Calls)
	for _, want := range []string{
		"hello through mcpguard: ünïcödé, 漢字, emoji 👍, `code`",
		"The sum of 2 and 3.5 is 5.5.",
		"9007199254740990",
		testRoots[0].URI, testRoots[1].URI, // the roots/list answer reached the server
		sampledText, // the sampling answer reached the server
		"Long running operation completed",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("results lack %q", want)
		}
	}
	if !strings.Contains(mustJSON(run.Init), "instructions") {
		t.Errorf("initialize result lacks the instructions: %s", mustJSON(run.Init))
	}
}

func compareRuns(t *testing.T, what string, direct, guarded *everythingRun) {
	t.Helper()
	dv, gv := reflect.ValueOf(*direct), reflect.ValueOf(*guarded)
	for i := 0; i < dv.NumField(); i++ {
		name := dv.Type().Field(i).Name
		d, g := dv.Field(i).Interface(), gv.Field(i).Interface()
		if !reflect.DeepEqual(d, g) {
			t.Errorf("%s: %s differs\n--- direct\n%s\n--- %s\n%s", what, name, truncate(mustJSON(d), 6000), what, truncate(mustJSON(g), 6000))
		}
	}
}

// TestEverythingDirect validates the scenario and its normalisation: two
// direct sessions must observe the same thing.
func TestEverythingDirect(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-everything")
	a := runEverything(t, connectDirect(t, bin, "stdio"))
	checkEverythingRun(t, a)
	b := runEverything(t, connectDirect(t, bin, "stdio"))
	compareRuns(t, "second direct run", a, b)
}

// TestEverythingGuarded: through mcpguard (baseline policy) the SDK client
// sees exactly what a direct connection sees.
func TestEverythingGuarded(t *testing.T) {
	t.Parallel()
	bin := npmServer(t, "mcp-server-everything")
	requireGuard(t)
	direct := runEverything(t, connectDirect(t, bin, "stdio"))
	checkEverythingRun(t, direct)
	guarded := runEverything(t, connectGuarded(t, nil, bin, "stdio"))
	checkEverythingRun(t, guarded)
	compareRuns(t, "guarded", direct, guarded)
}
