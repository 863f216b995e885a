package eventlog

import (
	"strings"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// Caps on canonicalised strings in a log line.
const (
	MaxFieldBytes   = 256  // method, tool, id, error_code, field, rule, server
	MaxMessageBytes = 1024 // message: the free_text default
)

// cleanN is canon.Display: the form in which every string from a peer is
// written to the log and shown by tail.
func cleanN(s string, max int) string { return canon.Display(s, max) }

// cleanKeepingBackticks is cleanN for text whose backticks are trusted
// (policy text): everything else is canonicalised as by cleanN.
func cleanKeepingBackticks(s string, max int) string {
	if !strings.Contains(s, "`") {
		return cleanN(s, max)
	}
	parts := strings.Split(s, "`")
	for i, p := range parts {
		parts[i] = canon.Display(p, len(p)) // replacements never lengthen
	}
	out := strings.Join(parts, "`")
	if len(out) <= max {
		return out
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut]
}
