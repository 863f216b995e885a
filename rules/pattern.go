package rules

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// Pattern rejects values that do not match a policy's regular expression
// (Go regexp, RE2 syntax: linear time, so a hostile value cannot make the
// match slow). It is an allow-list: it stops anything the field was not
// meant to carry. The match is unanchored, as regexp.MatchString is; a
// policy that means the whole value writes ^...$.
//
// A value that is not valid UTF-8 is rejected before matching: RE2 reads a
// bad byte as U+FFFD, which "." and negated classes match, while the server
// may decode the same bytes as something else.
type Pattern struct {
	re          *regexp.Regexp
	code        string
	reason      string
	remediation string
}

// DenyPattern rejects values that match a policy's regular expression (Go
// regexp, RE2 syntax). It is a deny-list for one field (`;`, $( in a regex
// that the server hands to a shell, say), so it only stops what its pattern
// names; prefer Pattern where the field's shape is known. Values that are
// not valid UTF-8 are rejected: an overlong encoding (C0 BB for ';') slips
// past a pattern but not past a lenient decoder.
type DenyPattern struct {
	re          *regexp.Regexp
	code        string
	reason      string
	remediation string
}

// NewPattern compiles expr. An empty code means codes.Pattern, an empty
// remediation a generic one.
func NewPattern(expr, code, remediation string) (*Pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("pattern: %w", err)
	}
	if code == "" {
		code = codes.Pattern
	}
	if remediation == "" {
		remediation = "Change the value so that it matches the pattern the policy requires for this field."
	}
	return &Pattern{re: re, code: code, remediation: remediation,
		reason: "value does not match the required pattern" + quotePattern(expr)}, nil
}

// NewDenyPattern compiles expr. An empty code means codes.Pattern, an empty
// remediation a generic one.
func NewDenyPattern(expr, code, remediation string) (*DenyPattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("deny pattern: %w", err)
	}
	if code == "" {
		code = codes.Pattern
	}
	if remediation == "" {
		remediation = "Change the value so that it no longer matches the pattern the policy forbids for this field."
	}
	return &DenyPattern{re: re, code: code, remediation: remediation,
		reason: "value matches a forbidden pattern" + quotePattern(expr)}, nil
}

// Check rejects value unless it matches.
func (p *Pattern) Check(value string) *Finding {
	if !utf8.ValidString(value) {
		return reject(p.code, "value is not valid UTF-8", p.remediation)
	}
	if !p.re.MatchString(value) {
		return reject(p.code, p.reason, p.remediation)
	}
	return nil
}

// Check rejects value if it matches.
func (p *DenyPattern) Check(value string) *Finding {
	if !utf8.ValidString(value) {
		return reject(p.code, "value is not valid UTF-8", p.remediation)
	}
	if p.re.MatchString(value) {
		return reject(p.code, p.reason, p.remediation)
	}
	return nil
}

// quotePattern renders the policy's pattern for a Reason when it is short
// and printable, so the model can correct itself; otherwise nothing. The
// pattern is policy text, never the value.
func quotePattern(expr string) string {
	if len(expr) > 100 || strings.ContainsFunc(expr, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return ""
	}
	return " " + expr
}

// Duration rejects values that are not a positive Go duration
// (time.ParseDuration: "90s", "1h30m", "250ms") no longer than a maximum.
// It stops option injection through a timeout field (a "timeout" of
// "--rootdir=/tmp" or "5; id") and timeouts that disable a server's own
// limits: negative ones, zero (which many servers read as "no timeout"),
// and absurd ones (2562047h is a valid duration and no timeout at all).
// Values longer than 64 bytes are rejected before parsing, and so is a
// leading '-' (even "-0s").
type Duration struct {
	max         time.Duration
	allowZero   bool
	remediation string
}

// DefaultMaxDuration is the longest duration a Duration check accepts when
// the policy names no maximum.
const DefaultMaxDuration = 24 * time.Hour

// NewDuration returns the duration check. A max of 0 means
// DefaultMaxDuration; allowZero lets a zero duration ("0", "0s") pass.
func NewDuration(max time.Duration, allowZero bool) *Duration {
	if max <= 0 {
		max = DefaultMaxDuration
	}
	return &Duration{max: max, allowZero: allowZero,
		remediation: "Pass a positive Go duration such as 90s, 5m or 1h30m, at most " + formatDuration(max) + "."}
}

const maxDurationLen = 64

// Check rejects value unless it is a Go duration above zero (or zero, if
// allowed) and at most the maximum.
func (c *Duration) Check(value string) *Finding {
	remediation := c.remediation
	if len(value) > maxDurationLen {
		return reject(codes.InvalidTimeout, "value is too long for a duration", remediation)
	}
	if strings.HasPrefix(value, "-") {
		return reject(codes.InvalidTimeout, "negative durations are not allowed", remediation)
	}
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return reject(codes.InvalidTimeout, "value is not a Go duration", remediation)
	case d < 0:
		return reject(codes.InvalidTimeout, "negative durations are not allowed", remediation)
	case d == 0 && !c.allowZero:
		return reject(codes.InvalidTimeout, "a zero duration is not allowed: many servers read it as no timeout", remediation)
	case d > c.max:
		return reject(codes.InvalidTimeout, "duration is longer than the policy's maximum of "+formatDuration(c.max), remediation)
	}
	return nil
}

// formatDuration writes d without the zero units time.Duration.String
// adds ("24h", not "24h0m0s").
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
