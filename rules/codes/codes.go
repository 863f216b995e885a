// Package codes is the one list of the error codes mcpguard writes in a
// rejection's error_code and in its log lines.
//
// The codes are permanent: clients and log pipelines match on them, so a
// code is only ever added, never renamed or removed. README.md's table of
// codes has one row per constant here and no other row (a test in package
// policy checks both directions), and an ingress check names its code in
// the check registry (policy/checks.go), never as a literal of its own.
package codes

// Raised by the ingress checks a policy names in check:.
const (
	DangerousFlag  = "INPUT_REJECTED_DANGEROUS_FLAG"
	ShellMetachar  = "INPUT_REJECTED_SHELL_METACHAR"
	ShellCommand   = "INPUT_REJECTED_SHELL_COMMAND"
	ControlChars   = "INPUT_REJECTED_CONTROL_CHARS"
	Pattern        = "INPUT_REJECTED_PATTERN" // pattern and deny_pattern, unless the rule names its own code
	InvalidTimeout = "INPUT_REJECTED_INVALID_TIMEOUT"
	URL            = "INPUT_REJECTED_URL"
	PathScope      = "INPUT_REJECTED_PATH_SCOPE"
	Secret         = "INPUT_REJECTED_SECRET"
	// RateLimited refuses a call that came too soon, not an unsafe one:
	// its rejection is retryable and says how long to wait. The OP_
	// prefix is the rejection contract's, for operational refusals.
	RateLimited = "OP_RATE_LIMITED"
)

// Raised by the rest of the policy: tools entries, schemas, pins and
// strict parsing.
const (
	ToolDenied   = "INPUT_REJECTED_TOOL_DENIED"
	Schema       = "INPUT_REJECTED_SCHEMA"
	ToolChanged  = "INPUT_REJECTED_TOOL_CHANGED"  // a definition differs from its pin
	ToolUnpinned = "INPUT_REJECTED_TOOL_UNPINNED" // an item the lock file does not pin
	Malformed    = "INPUT_REJECTED_MALFORMED"
	// Flow refuses a call that sends data out once the agent session
	// holds the labels a flows: rule names.
	Flow = "INPUT_REJECTED_FLOW"
)

// ServerRequest refuses a request the server sends (sampling, elicitation,
// roots) under server_requests:; it names the server's request, not the
// agent's input.
const ServerRequest = "SERVER_REQUEST_REJECTED"

// Raised by approval (action: ask): a call the policy lets through only
// with the user's answer to mcpguard's elicitation prompt.
const (
	ApprovalRequired = "OP_APPROVAL_REQUIRED" // the client cannot be asked (no elicitation capability)
	ApprovalDenied   = "OP_APPROVAL_DENIED"   // the user denied, declined or dismissed the prompt
	ApprovalTimeout  = "OP_APPROVAL_TIMEOUT"  // no answer in time
)

// Other is reserved by the published contract for a refusal that no other
// code names, so that a client matching on it keeps working; nothing
// raises it today, since every refusal has a code of its own.
const Other = "INPUT_REJECTED_OTHER"
