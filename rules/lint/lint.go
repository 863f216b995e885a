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
	"regexp"
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
// longest description among the reference servers' tools is under 2 KiB.
const MaxTextBytes = 4096

// MaxInstructionsBytes is MaxTextBytes for a server's instructions, which
// are longer by nature.
const MaxInstructionsBytes = 16384

type pattern struct {
	rule string
	re   *regexp.Regexp
}

var patterns = []pattern{
	{RuleDirectiveTag, regexp.MustCompile(`(?i)<\s*/?\s*(important|system|sys|instructions?|secret|hidden|critical|admin|override|urgent|assistant|ai|model|context|prompt|priority|mandatory|rules?)(\s[^>]*)?>|\[/?(inst|sys|system)\]|<\|(im_start|im_end|system|endoftext)\|>|<<\s*/?sys\s*>>`)},
	{RuleOverride, regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}\b(previous|prior|above|earlier|preceding|other|all|any|existing|original|system|safety|security)\b[^.\n]{0,20}\b(instructions?|prompts?|rules?|guidelines?|directions?|policies|policy|constraints?|restrictions?|guardrails?|confirmations?|warnings?)\b|\b(new|updated|real|true|actual) (system )?instructions?\s*:|\byour (new|real|true) (task|instructions?|goal|purpose)\b|\bfrom now on\b|\bsystem prompt\b`)},
	{RuleConceal, regexp.MustCompile(`(?i)\b(do not|don't|dont|never|must not|mustn't|should not|shouldn't|without)\b[^.\n]{0,25}\b(tell|telling|inform|informing|notify|notifying|mention|mentioning|alert|alerting|show|showing|reveal|revealing|disclose|disclosing|let|letting|ask|asking|warn|warning|bother|bothering|explain|explaining|report|reporting)\b[^.\n]{0,25}\b(the )?(user|human|operator|person|people|anyone)\b|\b(user|human)\b[^.\n]{0,20}\b(must|should|will|need) not (know|see|notice|find out|be (told|informed|aware|notified))\b|\b(keep|do) (this|it|that)\b[^.\n]{0,15}\b(secret|hidden|confidential|quiet|silent)\b|\b(secretly|covertly|behind the user'?s back)\b|\b(silently|quietly)\s+(send|upload|forward|copy|email|post|share|include|add|read|exfiltrate|transmit|call|run|execute|collect|log|record|store|save)\b|\bhide (this|it|that)\b`)},
	{RuleAddressesModel, regexp.MustCompile(`(?i)\b(note|message|instructions?|reminder|attention|memo)\s+(to|for)\s+(the\s+)?(ai|a\.i\.|assistant|model|llm|agent|claude|gpt|chatgpt|copilot|cursor)\b|\b(dear|hey|hello)\s+(ai|assistant|model|llm|agent|claude|gpt|chatgpt)\b|\bas an (ai|llm|assistant|language model)\b|\b(ai|assistant|llm|model|agent)\s*[,:]\s*(you )?(must|should|need to|have to|are required)\b`)},
	{RuleCrossTool, regexp.MustCompile(`(?i)\b(before|after|instead of|prior to|whenever|when(ever)? (you|the user|the assistant|the agent) (use|uses|call|calls|invoke|invokes|run|runs))\b[^.\n]{0,20}\b(using|calling|invoking|running)?\s*(any|every|all|other|another|the)\s+(other\s+)?(tools?|functions?|servers?|mcp)\b|\b(other|another|all|any|every)\s+(mcp\s+)?(servers?|tools?)('s|s')?\s+(tools?|functions?|calls?|results?)\b|\b(other|another|different)\s+mcp\b|\b(also|always|secretly|additionally)\s+(send|bcc|cc|forward|copy|email|mail|redirect|post|upload)\b|\b(change|replace|redirect|set|modify|override)\b[^.\n]{0,15}\b(the )?(recipient|receiver|destination|to address|phone number|email address|account number|iban|wallet)\b|\b(bcc|cc)\s*[:]?\s*[A-Za-z0-9._%+-]+@|\bshadow(s|ing)?\b[^.\n]{0,20}\btools?\b`)},
	{RuleSensitiveFile, regexp.MustCompile(`(?i)(~|\$home|%userprofile%|/home/[a-z0-9_-]+|/root|/users/[a-z0-9_-]+)?/?\.(ssh|aws|gnupg|kube|docker|azure|config/gcloud|cursor|codeium|continue)\b|(\b|_)id_(rsa|dsa|ecdsa|ed25519)\b|(^|[\s"'\x60(/~])\.env(\.[a-z]+)?\b|\bmcp\.json\b|\bclaude_desktop_config\.json\b|\b(\.?npmrc|\.?netrc|\.?pypirc|\.git-credentials|\.bash_history|\.zsh_history)\b|/etc/(passwd|shadow|sudoers)\b|\bauthorized_keys\b|\bknown_hosts\b|\bcredentials\.json\b|\bkeychain\b|\bwallet\.dat\b|\bprivate[ _-]?keys?\b|\bseed phrase\b|\bmnemonic phrase\b`)},
	{RuleSmuggleArgument, regexp.MustCompile(`(?i)\b(pass|provide|include|put|add|send|insert|embed|append|attach|place|copy|encode)\b[^.\n]{0,40}\b(content|contents|data|output|text|value|values|result|results|key|keys|token|tokens|secret|secrets|file|history|messages?|conversation|chat)\b(?:[^.\n]|\.\S){0,40}\b(as|in|into|inside|via|through|within|to)\b[^.\n]{0,10}['"\x60]?[A-Za-z_][A-Za-z0-9_]*['"\x60]?\s*(parameter|param|argument|arg|field)\b|\bsidenote\b`)},
	{RuleHTMLComment, regexp.MustCompile(`<!--|--\s*>`)},
	{RuleDataURI, regexp.MustCompile(`(?i)\bdata:[a-z]+/[a-z0-9.+-]+(;[a-z0-9=.+-]+)*(;base64)?,`)},
	{RuleURL, regexp.MustCompile(`(?i)\b(https?|wss?|ftp|file)://[^\s]`)},
	{RuleEncodedBlob, regexp.MustCompile(`[A-Za-z0-9+/_-]{120,}={0,2}|(\\x[0-9a-fA-F]{2}){16,}|(%[0-9a-fA-F]{2}){16,}`)},
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
	// Judge what the model reads: hidden characters inside a word must
	// not split a phrase out of the patterns' sight.
	visible := canon.Visible(s)
	for _, p := range patterns {
		if (ctx == Data && p.rule == RuleURL) || (ctx == ServerInstructions && p.rule == RuleAddressesModel) {
			continue
		}
		if p.re.MatchString(visible) {
			add(p.rule)
		}
	}
	if len(s) > max {
		add(RuleOversized)
	}
	return out
}

// hidden reports text a reader does not see but a model reads: what the
// text canonicaliser removes (escapes, controls, tag characters, bidi
// controls), invisible characters it keeps (canon.Invisible: joiners,
// variation selectors, soft hyphens...), and padding that pushes text out of
// sight (a run of blank lines, or of spaces).
func hidden(s string) bool {
	if !utf8.ValidString(s) || canon.Text(s) != s {
		return true
	}
	for _, r := range s {
		if canon.Invisible(r) {
			return true
		}
	}
	return strings.Contains(s, "\n\n\n\n\n\n") || strings.Contains(s, strings.Repeat(" ", 40)) || strings.Contains(s, strings.Repeat("\t", 10))
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
