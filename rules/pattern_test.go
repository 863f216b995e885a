package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/rules/codes"
)

func TestPattern(t *testing.T) {
	p, err := NewPattern(`^[A-Za-z0-9_,]+$`, "INPUT_REJECTED_INVALID_TAGS", "Pass alphanumeric, comma-separated identifiers.")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []charCase{
		{"space", "a b"},
		{"empty", ""},
		{"semicolon", "a;id"},
		{"newline after match", "a\nid"},
		{"trailing newline", "integration\n"},
		{"flag", "--rootdir"},
		{"fullwidth letters", "\uFF41"},
		{"unicode letter", "é"},
		{"invalid utf8", "a\xff"},
		{"NUL", "a\x00"},
		{"dollar", "$x"},
		{"comma then slash", "a,/etc"},
	} {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			f := p.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil", tc.value)
			}
			if f.Code != "INPUT_REJECTED_INVALID_TAGS" || f.Remediation != "Pass alphanumeric, comma-separated identifiers." {
				t.Errorf("finding %+v", f)
			}
			assertNoEcho(t, f, tc.value, `^[A-Za-z0-9_,]+$`)
		})
	}
	for _, v := range []string{"integration", "integration,slow", "a_b", "A1,B2", "x"} {
		if f := p.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
}

func TestDenyPattern(t *testing.T) {
	p, err := NewDenyPattern("[`;&\\n\\r]|\\$\\(", "INPUT_REJECTED_INVALID_RUN_PATTERN", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []charCase{
		{"semicolon", "TestX;rm -rf /"},
		{"backtick", "`id`"},
		{"ampersand", "a&b"},
		{"newline", "a\nb"},
		{"CR", "a\rb"},
		{"command substitution", "$(id)"},
		{"invalid utf8 overlong semicolon", "Test\xc0\xbbid"},
		{"invalid utf8", "\xff"},
	} {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			f := p.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil", tc.value)
			}
			if f.Code != "INPUT_REJECTED_INVALID_RUN_PATTERN" || !strings.Contains(f.Remediation, "no longer matches") {
				t.Errorf("finding %+v", f)
			}
		})
	}
	for _, v := range []string{"TestFoo|TestBar$", "", "Test.*", "$x", "é"} {
		if f := p.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
}

func TestPatternDefaultsAndErrors(t *testing.T) {
	p, err := NewPattern(`^x$`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Check("y"); f == nil || f.Code != codes.Pattern || f.Remediation == "" || !strings.Contains(f.Reason, "^x$") {
		t.Errorf("defaults: %+v", f)
	}
	d, err := NewDenyPattern(`x`, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if f := d.Check("x"); f == nil || f.Code != codes.Pattern || f.Remediation == "" {
		t.Errorf("deny defaults: %+v", f)
	}
	if _, err := NewPattern(`(`, "", ""); err == nil {
		t.Error("bad pattern compiled")
	}
	if _, err := NewDenyPattern(`a{2,1}`, "", ""); err == nil {
		t.Error("bad deny pattern compiled")
	}
	if _, err := NewPattern(`(?=x)`, "", ""); err == nil {
		t.Error("lookahead (not RE2) compiled")
	}
	// A pattern that is long or holds a control character is not repeated.
	long, _ := NewPattern(strings.Repeat("a", 101), "", "")
	if f := long.Check("b"); strings.Contains(f.Reason, "aaaa") {
		t.Errorf("long pattern in reason: %q", f.Reason)
	}
	ctl, _ := NewPattern("^a\n$", "", "")
	if f := ctl.Check("b"); strings.Contains(f.Reason, "\n") {
		t.Errorf("control character in reason: %q", f.Reason)
	}
}

func TestDuration(t *testing.T) {
	d := NewDuration(0, false)
	for _, tc := range []charCase{
		{"words", "10 minutes"},
		{"bare number", "30"},
		{"negative", "-5s"},
		{"negative zero", "-0s"},
		{"leading space", " 5s"},
		{"trailing space", "5s "},
		{"flag", "--rootdir=/tmp"},
		{"injection", "5s; id"},
		{"unknown unit", "5d"},
		{"empty", ""},
		{"overflow", "9999999999999999999h"},
		{"too long but valid syntax", strings.Repeat("0", 64) + "1s"},
		{"fullwidth digits", "\uFF15s"},
		{"invalid utf8", "5\xffs"},
		{"NUL", "5s\x00"},
		{"upper case unit", "5S"},
		{"zero", "0"},
		{"zero seconds", "0s"},
		{"zero with fraction", "0.0h"},
		{"largest duration", "2562047h"},
		{"just over the default max", "24h0m0.000000001s"},
		{"over the default max in minutes", "1441m"},
	} {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			f := d.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil", tc.value)
			}
			if f.Code != codes.InvalidTimeout || f.Reason == "" || f.Remediation == "" {
				t.Errorf("finding %+v", f)
			}
			assertNoEcho(t, f, tc.value)
		})
	}
	for _, v := range []string{"90s", "5m", "1h30m", "250ms", "1.5h", "+5s", "10us", "10µs", "1h2m3s4ms5us6ns", "24h", "1ns"} {
		if f := d.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
}

// TestDurationMaxAndZero: max bounds the duration exactly, allow_zero
// lets "0" through and nothing negative.
func TestDurationMaxAndZero(t *testing.T) {
	d := NewDuration(30*time.Minute, true)
	for _, v := range []string{"0", "0s", "30m", "1799s", "29m59.999s"} {
		if f := d.Check(v); f != nil {
			t.Errorf("Check(%q) = %+v", v, f)
		}
	}
	for _, v := range []string{"30m1ns", "31m", "1h", "2562047h", "-0s", "-1s"} {
		f := d.Check(v)
		if f == nil {
			t.Errorf("Check(%q) passed", v)
			continue
		}
		if !strings.Contains(f.Remediation, "30m") {
			t.Errorf("remediation %q does not name the maximum", f.Remediation)
		}
	}
}
