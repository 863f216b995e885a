package canon

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// forbidden returns a code point that must never survive Text: ESC, a C0
// control other than tab/LF/CR/FF, DEL, C1, a bidi control, a tag
// character outside an RGI subdivision flag, U+2028/2029, and the
// invisibles no text uses (soft hyphen outside a word, word joiner, U+FEFF
// after the start, invisible operators, deprecated format characters,
// interlinear annotation).
func forbidden(s string) (rune, bool) {
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case dropped(r), r == 0x2028, r == 0x2029, r >= 0x2060 && r <= 0x206F, r >= 0xFFF9 && r <= 0xFFFB:
			return r, true
		case r == 0xFEFF && i > 0:
			return r, true
		case r == 0xAD && (i == 0 || i+1 == len(rs) || !unicode.IsLetter(rs[i+1])):
			return r, true
		case r >= 0xE0000 && r <= 0xE007F:
			if n := rgiTagsAt(rs, i); n > 0 {
				i += n - 1
				continue
			}
			return r, true
		}
	}
	return 0, false
}

// rgiTagsAt returns the length of the RGI tag sequence at rs[i] after the
// black flag, or 0.
func rgiTagsAt(rs []rune, i int) int {
	if i == 0 || rs[i-1] != 0x1F3F4 {
		return 0
	}
	for _, seq := range rgiTagSequences {
		tags := []rune(seq)[1:]
		if len(rs)-i >= len(tags) && string(rs[i:i+len(tags)]) == string(tags) {
			return len(tags)
		}
	}
	return 0
}

// invisibleRun returns the index (in code points) of an invisible code
// point that stands right after another, outside the sequences Unicode
// defines that way (VS16 before the ZWJ of an emoji ZWJ sequence, the
// tag sequence of an RGI flag), or -1. Smuggling needs such runs.
func invisibleRun(s string) int {
	rs := []rune(s)
	for i := 1; i < len(rs); i++ {
		if n := rgiTagsAt(rs, i); n > 0 {
			i += n - 1
			continue
		}
		if Invisible(rs[i]) && Invisible(rs[i-1]) && !(rs[i-1] == 0xFE0F && rs[i] == 0x200D) && !(rs[i-1] == 0xE007F && rs[i] == 0x200D) {
			return i
		}
	}
	return -1
}

func seedInputs() []string {
	var seeds []string
	for _, c := range hostile {
		seeds = append(seeds, c.in)
	}
	for _, c := range benign {
		seeds = append(seeds, short(c.in))
	}
	return append(seeds, "\x1b", "\x1b[", "\x1bP", "\x1b]", "\u009d", "\xc2", "\xe2\x80", "\xf3\xa0\x80",
		"🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067", "👨\u200d", "\u200d👩", "क्\u200d", "\ufe0f\u200d🌈", "葛\U000E0100\U000E0101",
		"`x`\n\t\r", "\x1b\u009b", "\u0090\x1b\\", "\x1b]\x1b\x1b\\x")
}

// checkText holds Text(s) to every property of the contract.
func checkText(t *testing.T, s string) {
	out := Text(s)
	if want := refText(s); out != want {
		t.Fatalf("Text(%q) = %q, reference says %q", s, out, want)
	}
	if !utf8.ValidString(out) {
		t.Fatalf("Text(%q) = %q: invalid UTF-8", s, out)
	}
	if r, bad := forbidden(out); bad {
		t.Fatalf("Text(%q) = %q keeps U+%04X", s, out, r)
	}
	if i := invisibleRun(out); i >= 0 {
		t.Fatalf("Text(%q) = %q keeps a run of invisible code points at %d", s, out, i)
	}
	if again := Text(out); again != out {
		t.Fatalf("Text not idempotent: %q -> %q -> %q", s, out, again)
	}
	if got := NeedsText([]byte(s)); got != (out != s) {
		t.Fatalf("NeedsText(%q) = %v, but Text changed it: %v", s, got, out != s)
	}
	b, changed := AppendText([]byte("pre"), []byte(s))
	if string(b) != "pre"+out || changed != (out != s) {
		t.Fatalf("AppendText(%q) = %q, %v; Text = %q", s, b, changed, out)
	}
}

func checkFreeText(t *testing.T, s string, max int) {
	out := FreeText(s, max)
	limit := max
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if want := refFreeText(s, max); out != want {
		t.Fatalf("FreeText(%q, %d) = %q, reference says %q", s, max, out, want)
	}
	if len(out) > limit || !utf8.ValidString(out) {
		t.Fatalf("FreeText(%q, %d) = %q: too long or invalid UTF-8", s, max, out)
	}
	if strings.ContainsAny(out, "`\t\n\r") {
		t.Fatalf("FreeText(%q) = %q keeps a line break, tab or backtick", s, out)
	}
	if r, bad := forbidden(out); bad {
		t.Fatalf("FreeText(%q) = %q keeps U+%04X", s, out, r)
	}
	if i := invisibleRun(out); i >= 0 {
		t.Fatalf("FreeText(%q) = %q keeps a run of invisible code points at %d", s, out, i)
	}
	if again := FreeText(out, max); again != out {
		t.Fatalf("FreeText not idempotent: %q -> %q -> %q", s, out, again)
	}
}

func checkPath(t *testing.T, s string) {
	out := Path(s)
	if want := refPath(s); out != want {
		t.Fatalf("Path(%q) = %q, reference says %q", s, out, want)
	}
	if len(out) > MaxPathBytes {
		t.Fatalf("Path(%q) is %d bytes", s, len(out))
	}
	for i := 0; i < len(out); i++ {
		if !pathByte[out[i]] && out[i] != '?' {
			t.Fatalf("Path(%q) = %q keeps %q", s, out, out[i])
		}
	}
	if again := Path(out); again != out {
		t.Fatalf("Path not idempotent: %q -> %q -> %q", s, out, again)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range seedInputs() {
		f.Add(s)
	}
	f.Fuzz(checkText)
}

func FuzzFreeText(f *testing.F) {
	for i, s := range seedInputs() {
		f.Add(s, []int{0, 1, 3, 5, 16, -1}[i%6])
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1<<16 || max < -1<<16 {
			max %= 1 << 16
		}
		checkFreeText(t, s, max)
	})
}

func FuzzPath(f *testing.F) {
	for _, s := range seedInputs() {
		f.Add(s)
	}
	f.Add(strings.Repeat("é", 200))
	f.Fuzz(checkPath)
}

// fragments are the pieces the random differential test glues together:
// the parts of every sequence, the bytes around every boundary the
// scanners test, and ordinary text.
var fragments = []string{
	"a", "Z", " ", "`", "\t", "\n", "\r", "\x00", "\x07", "\x08", "\x18", "\x1b", "\x7f", "\\",
	"[", "]", "P", "X", "^", "_", "(", "#", "?", "0", "31", ";", "m", "B", "c", "~", "\x7e", "\x40", "\x3f", "\x2f",
	"\u0080", "\u0085", "\u0090", "\u0098", "\u009b", "\u009c", "\u009d", "\u009e", "\u009f", "\u00a0",
	"\u2029", "\u202a", "\u202e", "\u202f", "\u2065", "\u2066", "\u2069", "\u206a", "\u200d", "\u200e",
	"\U000DFFFF", "\U000E0000", "\U000E007F", "\U000E0080", "\U0010FFFF", "\ufffd",
	"\xc2", "\xe2", "\xe2\x80", "\xf3", "\xf3\xa0", "\xf3\xa0\x81", "\x80", "\xbf", "\xc0", "\xc1", "\xf5", "\xff",
	"\xed\xa0\x80", "\xe0\x80\x80", "\xf0\x80\x80\x80", "\xf4\x90\x80\x80",
	"日本", "é", "👨‍👩‍👧", "func main() {", "plain text of some length",
}

func randomInput(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(24); n > 0; n-- {
		b.WriteString(fragments[r.IntN(len(fragments))])
	}
	return b.String()
}

// TestDifferential holds every canonicaliser to its reference and its
// properties on many glued-together inputs; fuzzing does more, but this
// runs on every go test.
func TestDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		s := randomInput(r)
		checkText(t, s)
		checkFreeText(t, s, r.IntN(40)-2)
		checkPath(t, s)
	}
	for _, s := range seedInputs() {
		checkText(t, s)
		checkFreeText(t, s, 0)
		checkPath(t, s)
	}
}

// TestLongInputs puts the sequences where the word scanner changes gear:
// at every offset around 8- and 16-byte boundaries of a long clean run.
func TestLongInputs(t *testing.T) {
	clean := strings.Repeat("abcdefg\n", 8)
	for _, frag := range fragments {
		for off := 0; off <= 40; off++ {
			s := clean[:off] + frag + clean[off:]
			checkText(t, s)
			checkFreeText(t, s, 50)
			checkPath(t, s)
		}
	}
	big := bytes.Repeat([]byte("x"), 1<<16)
	big[len(big)-1] = 0x1b
	checkText(t, string(big))
}
