package message

import (
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// Summary is the summary of every rejection, and the JSON-RPC error message
// when a rejection is sent as an error.
const Summary = "Rejected unsafe MCP input"

// Rejection is the one shape in which mcpguard tells the agent it refused
// something. The first five fields are permanent; codes are append-only.
// Nothing in it repeats the caller's offending value.
type Rejection struct {
	Passed           bool              `json:"passed"`
	ErrorCode        string            `json:"error_code"`
	Error            string            `json:"error"`
	Summary          string            `json:"summary"`
	Remediation      string            `json:"remediation"`
	Tool             string            `json:"tool,omitempty"`
	Field            string            `json:"field,omitempty"`
	Rule             string            `json:"rule,omitempty"`
	Retryable        bool              `json:"retryable"`
	RetryAfter       int               `json:"retry_after_s,omitzero"` // a retryable refusal: whole seconds to wait
	ValidationErrors []ValidationError `json:"validation_errors,omitempty"`

	// Reason is the one-line reason without the field or the policy
	// entry ("path is outside the allowed roots"), for Headline. Empty
	// means Error stands in for it. Not serialised: Error carries it.
	Reason string `json:"-"`

	// Lead starts the headline in place of "Rejected unsafe MCP input",
	// for a refusal that is not about unsafe input (a rate limit). Not
	// serialised.
	Lead string `json:"-"`

	// Value is the offending value. It is never serialised: the log
	// records only its length and a hash.
	Value string `json:"-"`
}

// Headline is the one line a person or a model reads first: the summary,
// the reason and the field, as in "Rejected unsafe MCP input: path is
// outside the allowed roots (field path)". It is the message of a
// rejection sent as a JSON-RPC error, since many clients show only that.
func (r *Rejection) Headline() string {
	reason := r.Reason
	if reason == "" {
		reason = reasonOf(r.Error)
	}
	lead := r.Lead
	if lead == "" {
		lead = Summary
	}
	h := lead + ": " + reason
	if r.Field != "" {
		h += " (field " + r.Field + ")"
	}
	return h
}

// reasonOf reads the one-line reason out of a rejection's error sentence
// when the rejection did not set Reason: "rejected MCP input path: X
// (policy entry ingress[2])" gives X, "rejected MCP input: X" gives X.
func reasonOf(e string) string {
	if strings.HasPrefix(strings.ToLower(e), "rejected ") {
		if i := strings.Index(e, ": "); i >= 0 {
			e = e[i+2:]
		}
	}
	if i := strings.LastIndex(e, " (policy entry "); i > 0 && strings.HasSuffix(e, ")") {
		e = e[:i]
	}
	return e
}

// Text is the model-visible text of a rejected tool call: the headline,
// the policy entry, the remediation, and the rejection object as JSON on
// the last line for programs.
func (r *Rejection) Text() string {
	var b strings.Builder
	b.WriteString(r.Headline())
	if r.Rule != "" {
		b.WriteString("\nPolicy entry: " + r.Rule)
	}
	if r.Remediation != "" {
		b.WriteString("\nRemediation: " + r.Remediation)
	}
	obj, _ := json.Marshal(r)
	b.WriteByte('\n')
	b.Write(obj)
	return b.String()
}

// ValidationError is one JSON Schema failure: the keyword, where in the
// arguments, and the validator's message.
type ValidationError struct {
	Keyword      string `json:"keyword"`
	InstancePath string `json:"instance_path"`
	Message      string `json:"message"`
}

// Malformed is the rejection for a line refused by strict parsing.
func Malformed(e *Error) *Rejection {
	return &Rejection{
		ErrorCode:   codes.Malformed,
		Error:       "rejected malformed MCP message: " + e.Reason,
		Reason:      e.Reason,
		Summary:     Summary,
		Remediation: "Send one well-formed JSON-RPC 2.0 message per line, without duplicate or look-alike member names.",
	}
}

type errorObject struct {
	Code    int64      `json:"code"`
	Message string     `json:"message"`
	Data    *Rejection `json:"data,omitempty"`
}

type errorReply struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Error   errorObject    `json:"error"`
}

type toolResult struct {
	IsError bool          `json:"isError"`
	Content []textContent `json:"content"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type resultReply struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Result  toolResult     `json:"result"`
}

func idOrNull(id jsontext.Value) jsontext.Value {
	if id == nil {
		return jsontext.Value("null")
	}
	return id
}

// ErrorReply encodes a JSON-RPC error response. A nil id is written as null.
func ErrorReply(id jsontext.Value, code int64, msg string, data *Rejection) []byte {
	b, err := json.Marshal(errorReply{JSONRPC: "2.0", ID: idOrNull(id), Error: errorObject{Code: code, Message: msg, Data: data}})
	if err != nil {
		// Only an invalid id could fail, and ids reach here validated.
		b, _ = json.Marshal(errorReply{JSONRPC: "2.0", ID: jsontext.Value("null"), Error: errorObject{Code: jsonrpc2.CodeInternalError, Message: msg}})
	}
	return b
}

// RejectionError encodes r as a JSON-RPC error whose message is r's
// headline (the reason and the field: many clients show only the message)
// and whose data is r.
func RejectionError(id jsontext.Value, code int64, r *Rejection) []byte {
	r.Passed = false
	if r.Summary == "" {
		r.Summary = Summary
	}
	return ErrorReply(id, code, r.Headline(), r)
}

// RejectionResult encodes r as a CallToolResult with isError set and r's
// Text as its only content: MCP asks servers to report argument errors as
// tool results, so the model reads them and can correct itself.
//
// The result never has structuredContent: a client validates it against
// the tool's outputSchema even on an error result (the TypeScript SDK's
// Client.callTool throws when it does not match), and the rejection object
// matches no tool's schema, so the model would see a validation error
// instead of the reason.
func RejectionResult(id jsontext.Value, r *Rejection) []byte {
	r.Passed = false
	if r.Summary == "" {
		r.Summary = Summary
	}
	b, _ := json.Marshal(resultReply{JSONRPC: "2.0", ID: idOrNull(id), Result: toolResult{
		IsError: true,
		Content: []textContent{{Type: "text", Text: r.Text()}},
	}})
	return b
}
