package message

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func pathRejection() *Rejection {
	return &Rejection{
		ErrorCode:   "INPUT_REJECTED_PATH_SCOPE",
		Error:       "rejected MCP input path: path is outside the allowed roots (policy entry ingress[0])",
		Reason:      "path is outside the allowed roots",
		Remediation: "Pass a path inside /srv/a.",
		Tool:        "read_text_file",
		Field:       "path",
		Rule:        "ingress[0]",
		Value:       "/etc/passwd",
	}
}

// A rejected tool call is an isError result whose one text content holds
// the reason, the field, the remediation and the rejection object, and
// that has no structuredContent: a client validates structuredContent
// against the tool's outputSchema even on error results.
func TestRejectionResultShape(t *testing.T) {
	b := RejectionResult(jsontext.Value(`7`), pathRejection())
	var reply struct {
		ID     int            `json:"id"`
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		t.Fatal(err)
	}
	if _, ok := reply.Result["structuredContent"]; ok {
		t.Errorf("a rejection result has structuredContent: %s", b)
	}
	if reply.Result["isError"] != true || reply.ID != 7 {
		t.Errorf("not an isError result for id 7: %s", b)
	}
	content := reply.Result["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("want one content, got %s", b)
	}
	text := content[0].(map[string]any)["text"].(string)
	lines := strings.Split(text, "\n")
	if lines[0] != "Rejected unsafe MCP input: path is outside the allowed roots (field path)" {
		t.Errorf("headline %q", lines[0])
	}
	for _, want := range []string{"Remediation: Pass a path inside /srv/a.", "Policy entry: ingress[0]"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &obj); err != nil {
		t.Fatalf("last line is not the rejection object: %v\n%s", err, text)
	}
	for _, k := range []string{"passed", "error_code", "error", "summary", "remediation", "retryable", "field", "rule"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("rejection object lacks %s: %s", k, lines[len(lines)-1])
		}
	}
	if obj["passed"] != false || obj["error_code"] != "INPUT_REJECTED_PATH_SCOPE" || obj["summary"] != Summary {
		t.Errorf("rejection object %v", obj)
	}
	if strings.Contains(string(b), "/etc/passwd") {
		t.Errorf("the reply echoes the offending value: %s", b)
	}
}

// reject_as: error and every refusal sent as a JSON-RPC error: the message
// is the headline (many clients show only the message), data the object.
func TestRejectionErrorShape(t *testing.T) {
	b := RejectionError(jsontext.Value(`"a"`), -32602, pathRejection())
	var reply struct {
		Error struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Error.Message != "Rejected unsafe MCP input: path is outside the allowed roots (field path)" {
		t.Errorf("message %q", reply.Error.Message)
	}
	if reply.Error.Code != -32602 || reply.Error.Data["error_code"] != "INPUT_REJECTED_PATH_SCOPE" || reply.Error.Data["field"] != "path" {
		t.Errorf("error %s", b)
	}

	m := Malformed(&Error{Code: -32600, Reason: "duplicate member name \"id\""})
	b = RejectionError(nil, -32600, m)
	if err := json.Unmarshal(b, &reply); err != nil {
		t.Fatal(err)
	}
	if reply.Error.Message != `Rejected unsafe MCP input: duplicate member name "id"` {
		t.Errorf("malformed message %q", reply.Error.Message)
	}
}

// A rejection without Reason gets its headline from the error sentence,
// without the repeated summary and the policy entry.
func TestHeadlineWithoutReason(t *testing.T) {
	for _, c := range []struct{ err, field, want string }{
		{"rejected MCP input path: value carries a credential (rule aws) (policy entry ingress[2])", "path",
			"Rejected unsafe MCP input: value carries a credential (rule aws) (field path)"},
		{"rejected MCP input: a roots answer in params.inputResponses cannot be decoded", "",
			"Rejected unsafe MCP input: a roots answer in params.inputResponses cannot be decoded"},
		{"tool changed since it was pinned", "", "Rejected unsafe MCP input: tool changed since it was pinned"},
	} {
		r := &Rejection{Error: c.err, Field: c.field}
		if got := r.Headline(); got != c.want {
			t.Errorf("Headline(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
