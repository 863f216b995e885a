package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every channel judged: the server's requests to the client, the results
// that carry inputRequests, prompt arguments, and the client's answers,
// seen through the official TypeScript SDK client (what the agent really
// receives) with a hostile test server of our own.

type channelsOut struct {
	Calls    []tsOutcome `json:"calls"`
	Received []struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"received"`
	Prompt *tsOutcome `json:"prompt"`
	Icons  []struct {
		Name  string `json:"name"`
		Icons []struct {
			Src string `json:"src"`
		} `json:"icons"`
	} `json:"icons"`
}

func runChannels(t *testing.T, argv []string, spec map[string]any) channelsOut {
	t.Helper()
	spec["command"], spec["args"] = argv[0], argv[1:]
	spec["env"] = map[string]string{"PATH": os.Getenv("PATH")}
	var out channelsOut
	stdout := runNodeClient(t, "channels.mjs", spec)
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &out); err != nil {
		t.Fatalf("channels.mjs printed %q: %v", stdout, err)
	}
	return out
}

// logEvents reads the decision log as a list of JSON objects.
func logEvents(t *testing.T, logFile string) []map[string]any {
	t.Helper()
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	return evs
}

func TestServerRequestsJudged(t *testing.T) {
	t.Parallel()
	logFile := filepath.Join(t.TempDir(), "mcpguard.log")
	argv := guardArgv(t, &guardOpts{Log: logFile}, testserverBin)
	out := runChannels(t, argv, map[string]any{"calls": []tsCall{
		{Name: "ask_hostile", Arguments: map[string]any{}},
		{Name: "input_required", Arguments: map[string]any{"method": "roots/li\u200bst"}},
		{Name: "input_required", Arguments: map[string]any{"method": "tools/call"}},
		{Name: "echo", Arguments: map[string]any{"text": "still serving"}},
	}})
	if len(out.Calls) != 4 {
		t.Fatalf("got %d outcomes", len(out.Calls))
	}
	// The server got an answer to every request: errors for the refused.
	report := ""
	if r := out.Calls[0].Result; r != nil && len(r.Content) == 1 {
		report = r.Content[0].Text
	}
	for _, want := range []string{"metadata_url: error -32600", "lookalike_url: error -32600", "password_form: error -32600",
		"sampling: ok sampled", "benign_form: ok accept"} {
		if !strings.Contains(report, want) {
			t.Errorf("ask_hostile report lacks %q:\n%s", want, report)
		}
	}
	// The client saw only what the policy allowed, cleaned.
	var methods []string
	for _, r := range out.Received {
		methods = append(methods, r.Method)
		p := string(r.Params)
		if strings.Contains(p, "169.254") || strings.Contains(p, "password") || strings.Contains(p, "\\u001b") || strings.Contains(p, "\x1b") {
			t.Errorf("the client received %s %s", r.Method, p)
		}
	}
	if strings.Join(methods, ",") != "sampling/createMessage,elicitation/create" {
		t.Errorf("the client received %v, want the sampling request and the benign form only", methods)
	}
	// A hostile method inside inputRequests is refused, not cleaned.
	for i := 1; i <= 2; i++ {
		if o := out.Calls[i]; o.Error == nil {
			t.Errorf("input_required %d: got a result %+v, want an error", i, o.Result)
		}
	}
	if r := out.Calls[3].Result; r == nil || len(r.Content) != 1 || r.Content[0].Text != "still serving" {
		t.Errorf("the session does not keep serving: %+v", out.Calls[3])
	}
	// One log line per decision.
	counts := map[string]int{}
	for _, ev := range logEvents(t, logFile) {
		kind, hasKind := ev["kind"].(string)
		_, inputRequest := ev["input_request"]
		if (hasKind || inputRequest) && ev["event"] != "pin" {
			counts[kind+" "+ev["action"].(string)]++
		}
	}
	// The two inputRequests entries are of no kind (their lines have no
	// kind): their methods are not sampling, elicitation or roots once
	// read as sent.
	want := map[string]int{"elicitation_url rejected": 2, "elicitation_form rejected": 1, "elicitation_form allowed": 1,
		"sampling allowed": 1, " rejected": 2}
	for key, n := range want {
		if counts[key] != n {
			t.Errorf("log: %d lines %q, want %d (all: %v)", counts[key], key, n, counts)
		}
	}
	if len(counts) != len(want) {
		t.Errorf("log: decisions %v, want %v", counts, want)
	}
}

// TestPromptSecretRefused: a credential in a prompts/get argument never
// reaches the server under the baseline; the TypeScript client gets the
// rejection.
func TestPromptSecretRefused(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "record.jsonl")
	argv := guardArgv(t, nil, testserverBin, "-record", record)
	token := "ghp_" + strings.Repeat("R2d2C3po", 4) + "1234"
	out := runChannels(t, argv, map[string]any{"prompt": map[string]any{"name": "p", "arguments": map[string]string{"topic": token}}})
	if out.Prompt == nil || out.Prompt.Error == nil || !strings.Contains(out.Prompt.Error.Message, "credential") {
		t.Errorf("prompts/get with a token: got %+v, want mcpguard's rejection", out.Prompt)
	}
	got, _ := os.ReadFile(record)
	if bytes.Contains(got, []byte(token)) {
		t.Error("the token reached the server")
	}
}

// TestAnswerSecretRefused: the client's answer to a form elicitation that
// carries a credential is replaced by an error to the server.
func TestAnswerSecretRefused(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "record.jsonl")
	argv := guardArgv(t, nil, testserverBin, "-record", record)
	token := "ghp_" + strings.Repeat("R2d2C3po", 4) + "1234"
	out := runChannels(t, argv, map[string]any{"elicitAnswer": map[string]string{"name": token},
		"calls": []tsCall{{Name: "ask_elicit", Arguments: map[string]any{}}}})
	if r := out.Calls[0].Result; r == nil || !r.IsError {
		t.Errorf("ask_elicit: got %+v, want the server's report of an error answer", out.Calls[0])
	}
	got, _ := os.ReadFile(record)
	if bytes.Contains(got, []byte(token)) {
		t.Error("the token reached the server")
	}
}

// TestIconsAndResourceLinks: an icon to an outside host never reaches the
// client (it would fetch it by itself); a resource_link to one is removed
// when the policy neutralises links.
func TestIconsAndResourceLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "links.yaml")
	if err := os.WriteFile(policyFile, []byte("version: 1\nlinks: {links: neutralise}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "mcpguard.log")
	argv := guardArgv(t, &guardOpts{Policy: policyFile, Log: logFile}, testserverBin, "-icons")
	out := runChannels(t, argv, map[string]any{"listTools": true, "calls": []tsCall{{Name: "leak_images", Arguments: map[string]any{"link": true}}}})
	if len(out.Icons) != 1 || len(out.Icons[0].Icons) != 1 || out.Icons[0].Icons[0].Src != "data:," {
		t.Errorf("icons the client got: %+v", out.Icons)
	}
	raw, _ := json.Marshal(out.Calls)
	if strings.Contains(string(raw), "collector.example") || !strings.Contains(string(raw), "resource_link") {
		t.Errorf("the resource link the client got: %s", raw)
	}
	logged, _ := os.ReadFile(logFile)
	for _, want := range []string{`"canonicaliser":"images"`, `"canonicaliser":"links"`, "host collector.example"} {
		if !strings.Contains(string(logged), want) {
			t.Errorf("the log lacks %s", want)
		}
	}
}
