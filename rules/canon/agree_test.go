package canon_test

import (
	"strings"
	"testing"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/internal/codepoints"
)

// Display hides exactly what Text would remove: for every code point that
// is neither a control nor ASCII (every one codepoints.Sample stands
// for), in the contexts that decide joiners and selectors, Display
// replaces it if and only if Text changes the string.
func TestDisplayAgreesWithText(t *testing.T) {
	contexts := []string{"a%cb", "%c", "ب%cب", "ꦲ%cꦤ", "\U0001F468%c\U0001F4BB", "\u2764%c", "漢%c"}
	for _, r := range codepoints.Sample() {
		if r < 0xA0 {
			continue
		}
		for _, c := range contexts {
			s := strings.Replace(c, "%c", string(r), 1)
			if hidden, removed := canon.Display(s, 64) != s, canon.Text(s) != s; hidden != removed {
				t.Fatalf("%U in %+q: Display changes it %v, Text changes it %v", r, s, hidden, removed)
			}
		}
	}
}
