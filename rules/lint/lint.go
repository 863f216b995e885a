// Package lint finds instructions aimed at the model in what an MCP server
// shows it: tool, prompt and resource descriptions, titles, argument and
// schema descriptions, and the server's instructions.
//
// Tool poisoning (Invariant Labs, 2025) hides orders to the model in a
// tool's description: an <IMPORTANT> block that tells it to read
// ~/.ssh/id_rsa or mcp.json and pass the contents in a "sidenote"
// argument, to BCC every email to an attacker, to change the recipient of
// another server's send_message (the WhatsApp MCP exploit), and not to tell
// the user. The user approves a tool by its name and a short summary; the
// model reads all of it. The rules here are deterministic patterns with
// stable names, never a model: the same text always gets the same
// findings, and a reviewer can see why.
package lint

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/canon"
)

// Rule names, as they appear in findings and logs.
const (
	RuleDirectiveTag    = "directive_tag"     // <IMPORTANT>, <SYSTEM>, [INST] ...
	RuleOverride        = "override"          // "ignore previous instructions"
	RuleConceal         = "conceal_from_user" // "do not tell the user"
	RuleAddressesModel  = "addresses_model"   // "note to the AI:"
	RuleCrossTool       = "cross_tool"        // orders about other tools or servers
	RuleSensitiveFile   = "sensitive_file"    // ~/.ssh, .env, mcp.json ...
	RuleSmuggleArgument = "smuggle_argument"  // "pass its content as the sidenote parameter"
	RuleHTMLComment     = "html_comment"      // <!-- ... -->
	RuleHiddenText      = "hidden_text"       // invisible characters, escapes, padding
	RuleDataURI         = "data_uri"          // data:...;base64,
	RuleURL             = "url"               // http(s)://, ws(s)://, ftp://
	RuleEncodedBlob     = "encoded_blob"      // long base64 or hex runs
	RuleOversized       = "oversized"         // far beyond the size of real descriptions
)

// Finding is one rule that matched one field.
type Finding struct {
	Rule  string
	Field string
}

// String renders a finding as rule@field.
func (f Finding) String() string { return f.Rule + "@" + f.Field }

// MaxTextBytes is the size past which one description is reported: the
// longest description among the real servers of testdata/real.json is
// 6.4 KiB (desktop-commander's start_search).
const MaxTextBytes = 16384

// MaxInstructionsBytes is MaxTextBytes for a server's instructions, which
// are longer by nature.
const MaxInstructionsBytes = 65536

// markers are the rules about form rather than words, matched on the
// text in its own script.
var markers = []compiled{
	{rule: RuleHTMLComment, gate: []string{"--", "]:"}, re: lazy(`<!--|--\s*>|\[[^\]\n]{0,40}\]:\s*(#|<>)\s*[("']`)},
	{rule: RuleHiddenText, gate: []string{"none", "hidden", "font-size", "opacity", "color"}, re: lazy(`\b(display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(px|pt|em|rem|%)?\b|opacity\s*:\s*0(\.0+)?\b|color\s*:\s*(white|#fff(fff)?|transparent)\b)|<[a-z]+[^>]*\shidden(\s|>|=)`)},
	{rule: RuleDataURI, gate: []string{"data:"}, re: lazy(`\bdata:[a-z]+/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*(;base64)?,`)},
	// A URL is a finding where it carries data out: as an image a client
	// fetches on its own, with a placeholder for the data, or after an
	// order to send something to it (directives.go). A URL to
	// documentation is not.
	{rule: RuleURL, gate: []string{"://"}, re: lazy(`!\[[^\]]*\]\(\s*<?(https?|wss?|ftp)://|<img\b[^>]*\bsrc\s*=\s*["']?(https?|ftp)://|\b(https?|wss?|ftp)://[^\s"'<>]*[?&][\w.-]*=(\{|<|\$|%s|\[)|\bfile://`)},
	{rule: RuleEncodedBlob, gate: []string{"\\x"}, re: lazy(`(\\x[0-9a-f]{2}){16,}`)},
	{rule: RuleEncodedBlob, gate: []string{"%"}, re: lazy(`(%[0-9a-f]{2}){16,}`)},
}

// Context says what a string is, which decides the rules that apply.
type Context uint8

const (
	// Prose is a description or title: every rule applies.
	Prose Context = iota
	// Data is a schema's default, example, enum or const value: a URL
	// there is a value, not a link for the model.
	Data
	// ServerInstructions are the server's instructions, written for the model
	// by design: addressing it is no finding.
	ServerInstructions
)

// Text lints one string a server shows the model, found at field; max is
// the size past which it is oversized (0: MaxTextBytes).
func Text(field, s string, max int) []Finding { return Check(field, s, max, Prose) }

// Check is Text for a string of the given context.
func Check(field, s string, max int, ctx Context) []Finding {
	if max <= 0 {
		max = MaxTextBytes
	}
	var out []Finding
	add := func(rule string) {
		for _, f := range out {
			if f.Rule == rule {
				return
			}
		}
		out = append(out, Finding{Rule: rule, Field: field})
	}
	if hidden(s) {
		add(RuleHiddenText)
	}
	var r reading
	r.add(field, s, ctx)
	r.findings(func(rule, _ string) { add(rule) })
	if len(s) > max {
		add(RuleOversized)
	}
	return out
}

// hidden reports text a reader does not see but a model reads: what the
// text canonicaliser removes (escapes, controls, tag characters, bidi
// controls), invisible characters it keeps (canon.Invisible: joiners,
// variation selectors, soft hyphens...), and padding that pushes text out of
// sight (see padded).
func hidden(s string) bool {
	if !utf8.ValidString(s) || canon.Text(s) != s {
		return true
	}
	for _, r := range s {
		// a joiner or variation selector text keeps is an emoji's own
		// (⚠️, 👩‍💻); one it removes made canon.Text differ above
		if canon.Invisible(r) && r != 0x200D && !variationSelector(r) {
			return true
		}
	}
	return padded(s)
}

// Join renders findings as rule@field, comma-separated, each field
// canonicalised (member names are the server's text).
func Join(fs []Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = canon.FreeText(f.String(), 256)
	}
	return strings.Join(parts, ", ")
}

// Sorted returns findings ordered by field, then rule.
func Sorted(fs []Finding) []Finding {
	slices.SortFunc(fs, func(a, b Finding) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return fs
}

// Rules lists every rule name, in a fixed order.
func Rules() []string {
	return []string{RuleDirectiveTag, RuleOverride, RuleConceal, RuleAddressesModel, RuleCrossTool,
		RuleSensitiveFile, RuleSmuggleArgument, RuleHTMLComment, RuleHiddenText, RuleDataURI, RuleURL,
		RuleEncodedBlob, RuleOversized}
}

// padded reports blanks that push text out of sight: on one line, a run
// of 40 spaces, of 10 tabs or of 4 blanks that are not ASCII (NBSP,
// U+3000, U+2800 ...); or 6 line breaks with nothing but blanks between.
func padded(s string) bool {
	run, exotic, tabs, lines := 0, 0, 0, 0
	for _, c := range s {
		if !blank(c) {
			run, exotic, tabs, lines = 0, 0, 0, 0
			continue
		}
		switch {
		case c == '\t':
			tabs++
		case c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029 || c == 0x85:
			lines++
			run, exotic, tabs = 0, 0, 0
		case c >= utf8.RuneSelf:
			exotic++
			run++
		default:
			run++
		}
		if run >= 40 || exotic >= 4 || tabs >= 10 || lines >= 6 {
			return true
		}
	}
	return false
}

func variationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}
