// Package policy owns the compiled policy: loading a YAML policy file,
// validating it, and deciding on each message that crosses the proxy.
package policy

// Mode says what a failed check does.
type Mode string

const (
	Enforce Mode = "enforce" // reject
	Audit   Mode = "audit"   // log what would be rejected, forward it
)

// Policy is a compiled, immutable policy for one downstream server.
type Policy struct {
	// Server names the downstream in logs; empty means the command's base name.
	Server string
	Mode   Mode
}

// Baseline is the policy applied without --policy: strict parsing, egress
// hygiene, logging, every tool allowed.
func Baseline() *Policy {
	return &Policy{Mode: Enforce}
}
