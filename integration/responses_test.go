package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// responsesModel stands in for the OpenAI Responses API that Codex CLI
// streams from (POST /v1/responses, server-sent events). A request that
// carries N tool outputs and offers the tool of call N+1 of the script
// is answered with that call; anything else gets a short text. The
// stand-in keeps the text of each output as Codex sent it back in the
// next request.
type responsesModel struct {
	*httptest.Server
	mu      sync.Mutex
	outputs []string
	offered []string // per request: the call it was due as offered, "not offered in" its tools, or "-" (none due)
}

// responsesCall is a function call the stand-in asks for: tool name of
// the MCP server whose tools Codex groups under namespace (mcp__SERVER).
type responsesCall struct{ namespace, name, arguments string }

// responsesRequest is a Responses API request as the stand-in reads it.
type responsesRequest struct {
	Input []struct {
		Type   string          `json:"type"`
		Output json.RawMessage `json:"output"`
	} `json:"input"`
	Tools []responsesTool `json:"tools"`
}

// responsesTool is a tool a request offers: a function, or a namespace
// holding function tools.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// offeredAs finds how the request offers call c: as the function c.name
// inside the namespace tool c.namespace, the one shape Codex gives a
// server's MCP tools in a request (it routes a call by its namespace and
// name, and a provider without namespaces is offered no MCP tools). It
// returns "" when the request does not offer that tool: a call of it
// would come back as Codex's "unsupported call".
func (q *responsesRequest) offeredAs(c responsesCall) string {
	for _, tool := range q.Tools {
		if tool.Type != "namespace" || tool.Name != c.namespace {
			continue
		}
		for _, inner := range tool.Tools {
			if inner.Type == "function" && inner.Name == c.name {
				return c.namespace + "/" + c.name
			}
		}
	}
	return ""
}

// toolNames lists the request's tools, a namespace's own in brackets
// after its name, for a failure message.
func (q *responsesRequest) toolNames() string {
	var b strings.Builder
	for i, tool := range q.Tools {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tool.Name)
		if tool.Type == "namespace" {
			b.WriteByte('[')
			for j, inner := range tool.Tools {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(inner.Name)
			}
			b.WriteByte(']')
		}
	}
	return b.String()
}

func newResponsesModel(t *testing.T, script ...responsesCall) *responsesModel {
	m := &responsesModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var req responsesRequest
		if err := json.Unmarshal(body, &req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var outputs []string
		for _, in := range req.Input {
			if in.Type == "function_call_output" {
				outputs = append(outputs, outputText(in.Output))
			}
		}
		id := "resp_" + strconv.FormatInt(messageIDs.Add(1), 10)
		item := map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
		offered := "-"
		if n := len(outputs); n < len(script) {
			offered = "not offered in " + req.toolNames()
			if c := script[n]; req.offeredAs(c) != "" {
				offered = req.offeredAs(c)
				item = map[string]any{"type": "function_call", "id": "fc_" + id, "status": "completed",
					"call_id": "call_" + strconv.Itoa(n+1), "namespace": c.namespace, "name": c.name, "arguments": c.arguments}
			}
		}
		m.mu.Lock()
		if len(outputs) > len(m.outputs) {
			m.outputs = outputs
		}
		m.offered = append(m.offered, offered)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []map[string]any{
			{"type": "response.created", "response": map[string]any{"id": id}},
			{"type": "response.output_item.done", "item": item},
			{"type": "response.completed", "response": map[string]any{"id": id,
				"usage": map[string]int{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}},
		} {
			data, _ := json.Marshal(ev)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// outputText joins the text parts of a tool call's output (a string or
// a list of input_text items).
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// results returns the output of each call of the script as the model
// got it; fewer than want fail the test.
func (m *responsesModel) results(t *testing.T, want int, out string) []string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.outputs) != want {
		t.Fatalf("the model got %d tool outputs, want %d (how each request offered the call it was due: %q): %q\ncodex exec said:\n%s", len(m.outputs), want, m.offered, m.outputs, out)
	}
	return m.outputs
}

// codexExec is `codex exec` with the model provider set to the
// stand-in (no login, no retries, no git repository needed) and the
// MCP servers named required: Codex then starts the session only once
// they are connected, so the first request offers their tools (else it
// may go out before them).
func codexExec(model *responsesModel, prompt string, required ...string) []string {
	var args []string
	for _, name := range required {
		args = append(args, "-c", "mcp_servers."+name+".required=true")
	}
	return append(args, "exec", "--skip-git-repo-check",
		"-c", `model_provider="standin"`,
		"-c", `model_providers.standin.name="stand-in"`,
		"-c", `model_providers.standin.base_url="`+model.URL+`/v1"`,
		"-c", `model_providers.standin.wire_api="responses"`,
		"-c", `model_providers.standin.env_key="OPENAI_API_KEY"`,
		"-c", "model_providers.standin.request_max_retries=0",
		"-c", "model_providers.standin.stream_max_retries=0",
		prompt)
}
