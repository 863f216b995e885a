package eventlog

import "github.com/mcpguard/mcpguard/rules/canon"

// Caps on canonicalised strings in a log line.
const (
	MaxFieldBytes   = 256  // method, tool, id, error_code, field, rule, server
	MaxMessageBytes = 1024 // message: the free_text default
)

// cleanN is canon.Display: the form in which every string from a peer is
// written to the log and shown by tail.
func cleanN(s string, max int) string { return canon.Display(s, max) }
