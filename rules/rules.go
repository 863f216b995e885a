// Package rules holds the ingress string checks, one small type
// per check. Each check inspects one string value that the proxy has already
// decoded from JSON and selected; it never sees JSON, field paths or tools.
//
// Every type is immutable after construction and safe for concurrent use.
// A check returns nil when the value passes, or a *Finding saying why not.
//
// A Finding is shown to the agent (which may be hostile) and written to logs,
// so it never contains the checked value or any part of it: it names the
// problem and, where useful, policy text such as a listed flag.
package rules

// Finding says why a value was rejected. It never contains the checked value
// or any part of it; it may name policy text (a listed flag, a pattern).
type Finding struct {
	Code        string // stable error code, one of package codes or a policy's own
	Reason      string // what is wrong, without the value
	Remediation string // what the caller should do instead
}

// Check inspects one string. A nil result means the value passes.
type Check interface {
	Check(value string) *Finding
}

// Every check in this package satisfies Check.
var (
	_ Check = (*DangerousFlags)(nil)
	_ Check = (*ShellMetachars)(nil)
	_ Check = (*ControlChars)(nil)
	_ Check = (*Pattern)(nil)
	_ Check = (*DenyPattern)(nil)
	_ Check = (*Duration)(nil)
	_ Check = (*PathScope)(nil)
)

// reject returns a fresh Finding, so that a caller that edits one cannot
// change what the next caller sees.
func reject(code, reason, remediation string) *Finding {
	return &Finding{Code: code, Reason: reason, Remediation: remediation}
}
