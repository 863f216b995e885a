package rules

import (
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/internal/codepoints"
)

type charCase struct{ name, value string }

var shellRejects = []charCase{
	{"vertical semicolon U+FE14", "a\uFE14id"},
	{"greek varia U+1FEF folds to backtick", "\u1FEFid\u1FEF"},
	{"small ampersand", "a\uFE60b"},
	{"command substitution", "$(curl evil)"},
	{"variable", "$HOME"},
	{"braced variable", "${IFS}"},
	{"backticks", "`id`"},
	{"semicolon", "TestX;rm -rf /"},
	{"pipe", "x|sh"},
	{"or list", "x||sh"},
	{"ampersand background", "x&"},
	{"and list", "x&&sh"},
	{"redirect out", "x>/etc/passwd"},
	{"redirect in", "x</etc/shadow"},
	{"process substitution", "<(id)"},
	{"newline", "x\nid"},
	{"carriage return", "x\rid"},
	{"NUL", "x\x00id"},
	{"NEL U+0085", "x\u0085id"},
	{"line separator U+2028", "x\u2028id"},
	{"paragraph separator U+2029", "x\u2029id"},
	{"fullwidth grave U+FF40", "\uFF40id\uFF40"},
	{"fullwidth dollar U+FF04", "\uFF04(id)"},
	{"fullwidth semicolon U+FF1B", "x\uFF1Bid"},
	{"fullwidth vertical line U+FF5C", "x\uFF5Csh"},
	{"fullwidth ampersand U+FF06", "x\uFF06"},
	{"fullwidth less-than U+FF1C", "x\uFF1Cy"},
	{"fullwidth greater-than U+FF1E", "x\uFF1Ey"},
	{"small semicolon U+FE54", "x\uFE54id"},
	{"small dollar U+FE69", "\uFE69(id)"},
	{"small ampersand U+FE60", "x\uFE60"},
	{"small less-than U+FE64", "x\uFE64y"},
	{"small greater-than U+FE65", "x\uFE65y"},
	{"greek question mark U+037E", "x\u037Eid"},
	{"invalid utf8", "x\xffy"},
	{"overlong semicolon", "x\xc0\xbbid"},
	{"truncated sequence", "x\xe2\x80"},
	{"metachar at end after unicode", "héllo;"},
}

var shellPasses = []charCase{
	{"plain", "tests/unit"},
	{"flag", "--count=3"},
	{"spaces", "a b c"},
	{"quotes", `"quoted" 'single'`},
	{"parentheses and glob", "test_(a)*?[b]"},
	{"unicode text", "héllo 日本語 ✓"},
	{"regex without anchors", "Test[A-Z]+.*"},
	{"tab", "a\tb"},
	{"at and hash", "user@host#frag"},
	{"empty", ""},
	{"fullwidth letters", "\uFF41\uFF42"},
	{"percent", "100%"},
}

func TestShellMetachars(t *testing.T) {
	c := NewShellMetachars()
	for _, tc := range shellRejects {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			f := c.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil, want a rejection", tc.value)
			}
			if f.Code != codes.ShellMetachar || f.Reason == "" || f.Remediation == "" {
				t.Errorf("finding %+v", f)
			}
			assertNoEcho(t, f, tc.value)
		})
	}
	for _, tc := range shellPasses {
		t.Run("passes/"+tc.name, func(t *testing.T) {
			if f := c.Check(tc.value); f != nil {
				t.Fatalf("Check(%q) = %+v, want nil", tc.value, f)
			}
		})
	}
}

var controlRejects = []charCase{
	{"hangul choseong filler", "\u115F"},
	{"hangul jungseong filler", "x\u1160"},
	{"hangul filler", "\u3164name"},
	{"halfwidth hangul filler", "a\uFFA0"},
	{"NUL", "a\x00b"},
	{"tab", "a\tb"},
	{"LF", "a\nb"},
	{"CR", "a\rb"},
	{"ESC CSI colour", "a\x1b[31mred"},
	{"BEL", "a\x07"},
	{"unit separator", "a\x1f"},
	{"DEL", "a\x7f"},
	{"C1 PAD U+0080", "a\u0080"},
	{"NEL U+0085", "a\u0085b"},
	{"C1 CSI U+009B", "a\u009b31m"},
	{"C1 APC U+009F", "a\u009f"},
	{"LRE U+202A", "a\u202ab"},
	{"RLE U+202B", "a\u202bb"},
	{"PDF U+202C", "a\u202cb"},
	{"LRO U+202D", "a\u202db"},
	{"RLO U+202E", "a\u202eb"},
	{"LRI U+2066", "a\u2066b"},
	{"RLI U+2067", "a\u2067b"},
	{"FSI U+2068", "a\u2068b"},
	{"PDI U+2069", "a\u2069b"},
	{"LRM U+200E", "a\u200eb"},
	{"RLM U+200F", "a\u200fb"},
	{"ALM U+061C", "a\u061cb"},
	{"ZWSP U+200B", "a\u200bb"},
	{"ZWNJ U+200C", "a\u200cb"},
	{"ZWJ U+200D", "a\u200db"},
	{"ZWNJ between Persian and Latin", "\u0645\u200cb"},
	{"ZWNJ between Arabic and Devanagari", "\u0645\u200c\u0915"},
	{"word joiner U+2060", "a\u2060b"},
	{"invisible times U+2062", "a\u2062b"},
	{"invisible plus U+2064", "a\u2064b"},
	{"BOM U+FEFF", "\ufeffa"},
	{"soft hyphen U+00AD", "a\u00adb"},
	{"mongolian vowel separator U+180E", "a\u180eb"},
	{"combining grapheme joiner U+034F", "a\u034fb"},
	{"hangul filler U+3164", "a\u3164b"},
	{"halfwidth hangul filler U+FFA0", "a\uffa0b"},
	{"interlinear annotation U+FFF9", "a\ufff9b"},
	{"tag cancel U+E007F", "a\U000E007F"},
	{"tag letter U+E0041", "a\U000E0041\U000E0042"},
	{"language tag U+E0001", "a\U000E0001"},
	{"unassigned tag U+E0000", "a\U000E0000"},
	{"line separator U+2028", "a\u2028b"},
	{"paragraph separator U+2029", "a\u2029b"},
	{"reserved default-ignorable U+2065", "a\u2065b"},
	{"reserved default-ignorable U+FFF0", "a\ufff0b"},
	{"reserved default-ignorable U+FFF8", "a\ufff8b"},
	{"reserved tag-block U+E0080", "a\U000E0080b"},
	{"reserved tag-block U+E00FF", "a\U000E00FFb"},
	{"variation selector after a letter (byte smuggling)", "a\ufe0f\ufe01\ufe02"},
	{"supplementary variation selector after ASCII", "a\U000E0101"},
	{"ZWJ between Javanese and Latin", "\ua9b2\u200db"},
	{"tag sequence that is no RGI flag", "\U0001F3F4\U000E0061\U000E0062\U000E007F"},
	{"invalid utf8", "a\xffb"},
	{"lone surrogate bytes", "a\xed\xa0\x80b"},
}

var controlPasses = []charCase{
	{"ascii", "Hello, world!"},
	{"space", "a b"},
	{"latin", "héllo"},
	{"cjk", "日本語"},
	{"rtl text without controls", "שלום"},
	{"emoji", "\U0001F600"},
	{"emoji with variation selector", "\u2764\ufe0f"},
	{"skin tone modifier", "\U0001F44D\U0001F3FD"},
	{"flag regional indicators", "\U0001F1EB\U0001F1F7"},
	{"private use", "\ue000"},
	{"ideographic variation selector", "\u845b\U000E0100"},
	{"no-break space", "a\u00a0b"},
	{"Persian word with ZWNJ", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.txt"},
	{"Hindi conjunct with ZWJ", "\u0915\u094d\u200d\u0937"},
	{"Javanese word with ZWJ", "\ua9b2\u200d\ua9a4"},
	{"ZWNJ at the end of a Persian word", "\u0645\u06cc\u200c"},
	{"emoji ZWJ sequence", "\U0001F468\u200d\U0001F469\u200d\U0001F467"},
	{"subdivision flag", "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"},
	{"arabic number sign U+0600 (a visible prepended mark)", "\u0600\u0661"},
	{"braille pattern blank (a blank glyph, like a space)", "a\u2800b"},
	{"RLM before a neutral in Hebrew", "\u05e9\u05dc\u05d5\u05dd\u200f!"},
	{"empty", ""},
	{"shell punctuation", "$(x);|&<>`"},
}

func TestControlChars(t *testing.T) {
	c := NewControlChars()
	for _, tc := range controlRejects {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			f := c.Check(tc.value)
			if f == nil {
				t.Fatalf("Check(%q) = nil, want a rejection", tc.value)
			}
			if f.Code != codes.ControlChars || f.Reason == "" || f.Remediation == "" {
				t.Errorf("finding %+v", f)
			}
			assertNoEcho(t, f, tc.value)
		})
	}
	for _, tc := range controlPasses {
		t.Run("passes/"+tc.name, func(t *testing.T) {
			if f := c.Check(tc.value); f != nil {
				t.Fatalf("Check(%q) = %+v, want nil", tc.value, f)
			}
		})
	}
}

// control_chars and text share one definition: for every code point (every
// one codepoints.Sample stands for), in each context that decides joiners, selectors and fillers, a value is
// refused on ingress exactly when text would remove or rewrite the code
// point on egress. The layout characters text keeps because they hide
// nothing from a reader (TAB, LF, CR, FF, a soft hyphen inside a word, a
// byte order mark at the start) are refused on ingress all the same: a
// value is one line, and in an identifier they are an invisible difference.
func TestControlCharsAgreesWithText(t *testing.T) {
	c := NewControlChars()
	contexts := []string{"a%cb", "%c", "\u0628%c\u0628", "\ua9b2%c\ua9a4", "\u0915\u094d%c\u0937",
		"\U0001F468%c\U0001F4BB", "\u2764%c", "\u845b%c", "\u1100%c\u1161", "\u1820%c"}
	for _, r := range codepoints.Sample() {
		for _, ctx := range contexts {
			v := strings.Replace(ctx, "%c", string(r), 1)
			refused := c.Check(v) != nil
			removed := canon.Text(v) != v || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == 0xAD || r == 0xFEFF
			if refused != removed {
				t.Fatalf("%U in %+q: refused on ingress %v, removed on egress %v", r, v, refused, removed)
			}
		}
	}
}

// Every C0 and C1 control is rejected, one by one.
func TestControlCharsEveryC0C1(t *testing.T) {
	c := NewControlChars()
	for r := rune(0); r <= 0x9F; r++ {
		if r >= 0x20 && r < 0x7F {
			continue
		}
		if c.Check("x"+string(r)+"y") == nil {
			t.Errorf("U+%04X passed", r)
		}
	}
}

// TestShellMetacharsCoversNFKC: every character whose NFKC form holds a
// shell metacharacter or a line break is refused on its own, so a server
// that normalises NFKC before its shell sees it can never read one that
// passed.
func TestShellMetacharsCoversNFKC(t *testing.T) {
	c := NewShellMetachars()
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		if n := norm.NFKC.String(s); strings.ContainsAny(n, "`$;|&<>\n\r\x00\u0085\u2028\u2029") && c.Check(s) == nil {
			t.Errorf("U+%04X passes, but its NFKC form %q holds a metacharacter", r, n)
		}
	}
}
