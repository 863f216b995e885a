package message

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/sourcegraph/jsonrpc2"
)

// CodeMalformed is the error_code of a message refused by strict parsing.
const CodeMalformed = "INPUT_REJECTED_MALFORMED"

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
	ValidationErrors []ValidationError `json:"validation_errors,omitempty"`

	// Value is the offending value. It is never serialised: the log
	// records only its length and a hash.
	Value string `json:"-"`
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
		ErrorCode:   CodeMalformed,
		Error:       "rejected malformed MCP message: " + e.Reason,
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
	IsError           bool          `json:"isError"`
	Content           []textContent `json:"content"`
	StructuredContent *Rejection    `json:"structuredContent"`
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

// RejectionError encodes r as a JSON-RPC error with r as error.data.
func RejectionError(id jsontext.Value, code int64, r *Rejection) []byte {
	r.Passed = false
	if r.Summary == "" {
		r.Summary = Summary
	}
	return ErrorReply(id, code, Summary, r)
}

// RejectionResult encodes r as a CallToolResult with isError set, r as its
// structuredContent and r's JSON as its text content: MCP asks servers to
// report argument errors as tool results, so the model reads them and can
// correct itself.
func RejectionResult(id jsontext.Value, r *Rejection) []byte {
	r.Passed = false
	if r.Summary == "" {
		r.Summary = Summary
	}
	text, _ := json.Marshal(r)
	b, _ := json.Marshal(resultReply{JSONRPC: "2.0", ID: idOrNull(id), Result: toolResult{
		IsError:           true,
		Content:           []textContent{{Type: "text", Text: string(text)}},
		StructuredContent: r,
	}})
	return b
}
