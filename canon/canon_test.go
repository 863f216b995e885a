package canon

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextRemovesHostileSequences(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"CSI colour", "a\x1b[31mred\x1b[0m b", "ared b"},
		{"CSI cursor up hides a line", "safe\x1b[1A\x1b[2Kevil", "safeevil"},
		{"CSI private mode", "x\x1b[?25ly", "xy"},
		{"OSC 8 hyperlink, BEL", "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07", "click"},
		{"OSC 8 hyperlink, ST", "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"OSC 52 clipboard write", "ok\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07done", "okdone"},
		{"OSC title", "\x1b]0;pwned\x07t", "t"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"APC", "a\x1b_payload\x1b\\b", "ab"},
		{"PM", "a\x1b^payload\x1b\\b", "ab"},
		{"SOS", "a\x1bXpayload\x1b\\b", "ab"},
		{"charset designation", "a\x1b(Bb", "ab"},
		{"two-byte ESC c", "a\x1bcb", "ab"},
		{"ESC 7 save cursor", "a\x1b7b", "ab"},
		{"ESC at end", "abc\x1b", "abc"},
		{"unterminated OSC runs to end", "keep\x1b]52;c;AAAA and the rest", "keep"},
		{"unterminated CSI", "a\x1b[12", "a"},
		{"8-bit CSI", "a\u009b31mb", "ab"},
		{"8-bit OSC with 8-bit ST", "a\u009d8;;http://x\u009cb", "ab"},
		{"8-bit DCS", "a\u0090q\u009cb", "ab"},
		{"NEL", "a\u0085b", "ab"},
		{"lone C1", "a\u0080\u0099b", "ab"},
		{"NUL BEL BS DEL", "a\x00b\x07c\x08d\x7fe", "abcde"},
		{"form feed, vertical tab", "a\x0cb\x0bc", "abc"},
		{"tag characters smuggle text", "hi\U000E0001\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065\U000E007F", "hi"},
		{"RLO Trojan Source", "access = \u202euser\u202c", "access = user"},
		{"isolates", "\u2066a\u2067b\u2068c\u2069", "abc"},
		{"embeddings", "\u202aa\u202bb\u202c", "ab"},
		{"invalid UTF-8", "a\xffb\xc0", "a\ufffdb\ufffd"},
		{"encoded surrogate", "a\xed\xa0\x80b", "a\ufffd\ufffd\ufffdb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
			if !NeedsText([]byte(c.in)) {
				t.Errorf("NeedsText(%q) = false", c.in)
			}
		})
	}
}

func TestTextKeepsBenignOutput(t *testing.T) {
	for _, in := range []string{
		"",
		"plain ASCII line",
		"func main() {\n\tfmt.Println(`raw string`)\n}\n",
		"const s = `${a} + ${b}`; // template literal",
		`{"json": [1, 2.5e3, true, null], "nested": {"k": "v"}}`,
		"# Title\n\n- item *em* **strong** [link](http://x)\n\n```go\ncode\n```\n",
		"windows line\r\nendings\r\n",
		"family 👨‍👩‍👧 flag 🇳🇴 heart ❤️ skin 👋🏽",
		"日本語のテキスト、中文文本、한국어",
		"שלום עולם — مرحبا بالعالم",
		"marks \u200e and \u200f stay; ZWJ \u200d stays",
		"U+FFFD itself stays: \ufffd",
		strings.Repeat("long clean line with tabs\tand newlines\n", 1000),
	} {
		if got := Text(in); got != in {
			t.Errorf("Text changed benign %q to %q", truncate(in), truncate(got))
		}
		if NeedsText([]byte(in)) {
			t.Errorf("NeedsText(%q) = true", truncate(in))
		}
	}
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func TestFreeText(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"line1\nline2\tx\r\n", 0, "line1 line2 x  "},
		{"run `rm -rf /`", 0, "run 'rm -rf /'"},
		{"nul\x00bel\x07", 0, "nul bel "},
		{"\x1b[31mred\x1b[0m", 0, "red"},
		{"tag\U000E0041s", 0, "tags"},
		{"abcdef", 4, "abcd"},
		{"日本語", 4, "日"}, // cut on a UTF-8 boundary
		{"plain", 10, "plain"},
		{strings.Repeat("a", 2000), 0, strings.Repeat("a", 1024)},
	}
	for _, c := range cases {
		if got := FreeText(c.in, c.max); got != c.want {
			t.Errorf("FreeText(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestPath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"src/main.go", "src/main.go"},
		{"a b/c$(x).go", "a?b/c??x?.go"},
		{"über/файл", "?ber/????"},
		{"\x1b[31m/x", "??31m/x"},
		{"bad\xffbyte", "bad?byte"},
		{strings.Repeat("a", 300), strings.Repeat("a", 256)},
	}
	for _, c := range cases {
		if got := Path(c.in); got != c.want {
			t.Errorf("Path(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range []string{"text", "free_text", "path"} {
		if got, err := ParseKind(k); err != nil || string(got) != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("html"); err == nil {
		t.Error("ParseKind accepted html")
	}
}

// forbidden reports a code point that must never survive Text.
func forbidden(s string) (rune, bool) {
	for _, r := range s {
		if r == 0x1B || removed(r) {
			return r, true
		}
	}
	return 0, false
}

var seeds = []string{
	"a\x1b[31mb", "\x1b]8;;http://x\x07y\x1b]8;;\x07", "\x1b]52;c;AA\x1b\\", "\u009b1m", "\u009dx\u009c",
	"\U000E0041", "\u202e", "\u2066", "\x00\x07\x7f", "\x1b", "\x1b[", "\x1bP", "\xff", "\xc2", "`x`\n\t\r",
	"👨‍👩‍👧", "日本", "a\x1b\x1b[b", "\x1b\u009b", "\u0090\x1b\\",
}

func FuzzText(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Text(%q) = %q: invalid UTF-8", s, out)
		}
		if r, bad := forbidden(out); bad {
			t.Fatalf("Text(%q) = %q keeps U+%04X", s, out, r)
		}
		if again := Text(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if NeedsText([]byte(s)) != (out != s) {
			t.Fatalf("NeedsText(%q) = %v, but Text changed it: %v", s, NeedsText([]byte(s)), out != s)
		}
		b, changed := AppendText([]byte("pre"), []byte(s))
		if string(b) != "pre"+out || changed != (out != s) {
			t.Fatalf("AppendText disagrees with Text on %q", s)
		}
	})
}

func FuzzFreeText(f *testing.F) {
	for _, s := range seeds {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max%2048 + 1
		if max <= 0 {
			max += 2048
		}
		out := FreeText(s, max)
		if len(out) > max || !utf8.ValidString(out) {
			t.Fatalf("FreeText(%q, %d) = %q", s, max, out)
		}
		if strings.ContainsAny(out, "`\t\n\r\x00") {
			t.Fatalf("FreeText(%q) = %q keeps a control or backtick", s, out)
		}
		if r, bad := forbidden(out); bad {
			t.Fatalf("FreeText(%q) = %q keeps U+%04X", s, out, r)
		}
		if again := FreeText(out, max); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		b, changed := AppendFreeText(nil, []byte(s), max)
		if string(b) != out || changed != (out != s) {
			t.Fatalf("AppendFreeText disagrees with FreeText on %q", s)
		}
	})
}

func FuzzPath(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Path(s)
		if len(out) > MaxPathBytes {
			t.Fatalf("Path(%q) is %d bytes", s, len(out))
		}
		for i := 0; i < len(out); i++ {
			if !pathByte[out[i]] && out[i] != '?' {
				t.Fatalf("Path(%q) = %q keeps %q", s, out, out[i])
			}
		}
		if Path(out) != out {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}
