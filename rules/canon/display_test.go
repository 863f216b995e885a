package canon

import (
	"testing"
	"unicode/utf8"
)

func TestDisplay(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"a\x1b[31mred`x`", "a [31mred'x'"},
		{"a\u0085b", "a b"},
		{"fi\u202ele", "fi?le"},
		{"a\u200bb", "a?b"},
		{"hi\U000E0041\U000E0042", "hi??"},
		{"a\u2028b", "a?b"},
		{"bad\xffbyte", "bad?byte"},
		{"reserved \u2065 \uFFF0 \U000E0080", "reserved ? ? ?"},
		// Kept as Text keeps them: emoji sequences, joining scripts.
		{"\u2764\ufe0f \U0001F468\u200d\U0001F4BB", "\u2764\ufe0f \U0001F468\u200d\U0001F4BB"},
		{"\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"},
		{"می\u200cخواهم", "می\u200cخواهم"},
		{"ꦲ\u200dꦤ", "ꦲ\u200dꦤ"}, // Javanese
		{"a\ufe0f", "a?"},
	} {
		if got := Display(tc.in, 100); got != tc.want {
			t.Errorf("Display(%+q) = %+q, want %+q", tc.in, got, tc.want)
		}
	}
}

// The cap never leaves a joiner judged by what it cut off, nor part of a
// tag sequence.
func TestDisplayCap(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"ab\U0001F468\u200d\U0001F4BB", 9, "ab\U0001F468?"},
		{"x\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", 10, "x\U0001F3F4"},
		{"abcdef", 3, "abc"},
	} {
		got := Display(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Display(%+q, %d) = %+q, want %+q", tc.in, tc.max, got, tc.want)
		}
		if again := Display(got, tc.max); again != got {
			t.Errorf("Display is not idempotent on %+q: %+q", got, again)
		}
	}
}

func FuzzDisplay(f *testing.F) {
	for _, s := range []string{"a\x1b[31m`x`", "\U0001F468\u200d\U0001F4BB", "می\u200cخواهم", "a\u202eb\xff", "\u2764\ufe0f\u200d"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := Display(s, max)
		if len(got) > max || !utf8.ValidString(got) {
			t.Fatalf("Display(%+q, %d) = %+q: over the cap or invalid", s, max, got)
		}
		if again := Display(got, max); again != got {
			t.Fatalf("Display not idempotent: %+q -> %+q -> %+q", s, got, again)
		}
		for _, r := range got {
			if r < 0x20 || r >= 0x7F && r <= 0x9F || r == '`' || r == 0x2028 || r == 0x2029 || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("Display(%+q) = %+q keeps %U", s, got, r)
			}
		}
	})
}
