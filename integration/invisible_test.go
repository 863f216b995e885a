package integration

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benignCorpus must come through mcpguard byte-identical: every script and
// emoji sequence that uses invisible code points.
var benignCorpus = map[string]string{
	"family and profession ZWJ emoji": "👨\u200d👩\u200d👧\u200d👦 👩\u200d⚕\ufe0f 🧑\u200d🚀 👨🏿\u200d🔧 🧑🏽\u200d🤝\u200d🧑🏻 🏳\ufe0f\u200d🌈 🏴\u200d☠\ufe0f",
	"skin tones":                      "👋🏽 👍🏿 👩🏻",
	"keycaps":                         "1\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3",
	"hearts":                          "❤\ufe0f ❤\ufe0f\u200d🔥 ✔\ufe0e",
	"flags":                           "🇳🇴 🇯🇵 🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F 🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F 🏴\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F",
	"Devanagari conjuncts with ZWJ":   "क्\u200dष क्\u200cष र्\u200dय हिन्दी",
	"Persian with ZWNJ":               "می\u200cخواهم کتاب\u200cها را بخوانم",
	"Arabic and Hebrew with marks":    "السعر \u061c١٢٣ ريال\u200f. \u200fשלום, version 1.2\u200e (beta)",
	"Han with ideographic selectors":  "葛\U000E0100城市 辻\U000E0101",
	"code with tabs and CRLF":         "func main() {\r\n\tfmt.Println(`x`)\r\n}\r\n",
	"base64":                          "aGVsbG8gd29ybGQ=\nZm9vYmFy+/==",
	"Go source with form feeds":       "package p\n\f\n// Section two.\nfunc f() {}\n",
	"prose with soft hyphens":         "Donau\u00addampf\u00adschiff, in\u00adcom\u00adpre\u00adhen\u00adsi\u00adble, ско\u00adрость",
	"byte order mark":                 "\ufeffusing System;\n",
}

// hostileInvisible maps smuggling payloads to what the client must read.
var hostileInvisible = map[string]string{
	"variation-selector bytes after ASCII": "hi\U000E0100\U000E0153\U000E0145\U000E0133\U000E0152\U000E0145\U000E0144",
	"zero-width runs between ASCII":        "h\u200b\u200ci\u200d\u2060",
	"Hangul fillers":                       "h\u3164i\uffa0",
	"invisible operators":                  "h\u2061i\u2064",
	"deprecated format characters":         "h\u206ai\u206f",
	"interlinear annotation":               "h\ufff9i\ufffb",
	"soft hyphens outside a word":          "\u00adhi\u00ad",
	"BOM inside text":                      "h\ufeffi",
	"tags":                                 "hi\U000E0041\U000E0042",
}

// TestGuardedInvisibleText: the benign corpus reaches the client (the Go
// SDK) byte-identical, in content and structuredContent; the smuggling
// classes do not survive, so each payload reads as "hi".
func TestGuardedInvisibleText(t *testing.T) {
	t.Parallel()
	cs := connectGuarded(t, nil, testserverBin)
	for name, text := range benignCorpus {
		if got := callText(t, cs, "echo", map[string]any{"text": text}); got != text {
			t.Errorf("%s changed through mcpguard:\n got %+q\nwant %+q", name, got, text)
		}
	}
	for name, text := range hostileInvisible {
		if got := callText(t, cs, "echo", map[string]any{"text": text}); got != "hi" {
			t.Errorf("%s through mcpguard: %+q, want \"hi\"", name, got)
		}
	}
	// Line and paragraph separators become newlines.
	if got := callText(t, cs, "echo", map[string]any{"text": "a\u2028b\u2029c"}); got != "a\nb\nc" {
		t.Errorf("U+2028/2029 through mcpguard: %+q", got)
	}
	// structuredContent too, and the server's member names.
	for name, text := range benignCorpus {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil {
			t.Fatal(err)
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc["text"] != text {
			t.Errorf("%s changed in structuredContent: %+q", name, sc["text"])
		}
	}
}
