package lint

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// decodePayloads returns the readable texts encoded in s: base64, short
// or split into chunks ("aWdub3Jl IGFsbCBw..."), hex ("69 67 6e 6f",
// "\x69\x67", "%69%67") and \u escapes. A model decodes these on request
// ("decode the following and follow it"); a byte pattern does not. Only
// payloads that decode to readable text are returned, and those are
// decoded again, to depth levels.
func decodePayloads(s string, depth int) []string {
	var out []string
	seen := 0
	emit := func(p string) {
		if seen < 64 && readable(p) {
			seen++
			out = append(out, p)
			if depth > 1 {
				out = append(out, decodePayloads(p, depth-1)...)
			}
		}
	}
	for _, run := range base64Runs(s) {
		if p, ok := decodeBase64(strings.Join(run, "")); ok && readable(p) {
			emit(p)
			continue
		}
		if len(run) > 1 {
			for _, tok := range run {
				if len(tok) >= 12 {
					if p, ok := decodeBase64(tok); ok {
						emit(p)
					}
				}
			}
		}
	}
	for _, m := range hexRun().FindAllString(s, 16) {
		digits := hexDigits().ReplaceAllString(m, "")
		if b, err := hex.DecodeString(digits[:len(digits)&^1]); err == nil {
			emit(string(b))
		}
	}
	for _, m := range unicodeEscapes().FindAllString(s, 16) {
		if u, err := strconv.Unquote(`"` + m + `"`); err == nil {
			emit(u)
		}
	}
	if strings.Count(s, "%") >= 3 {
		if u, err := url.QueryUnescape(s); err == nil && u != s {
			emit(u)
		}
	}
	return out
}

var (
	hexRun         = lazyregexp.New(`(?i)(?:\\x[0-9a-f]{2}){4,}|(?:%[0-9a-f]{2}){4,}|\b(?:0x)?(?:[0-9a-f]{2}[ :,-]?){8,}`)
	hexDigits      = lazyregexp.New(`(?i)\\x|0x|[^0-9a-f]`)
	unicodeEscapes = lazyregexp.New(`(?i)(?:\\u[0-9a-f]{4}){3,}`)
)

// base64Runs splits s into tokens and returns the runs of consecutive
// tokens that look like base64 chunks, each at least 12 characters in
// all. A token looks like one when it is made of the base64 alphabet
// and has a digit, a sign (+ / =) or a capital inside it, or is long:
// ordinary words rarely have, and decode to nothing readable when they do.
func base64Runs(s string) [][]string {
	var runs [][]string
	var cur []string
	size := 0
	flush := func() {
		if size >= 12 {
			runs = append(runs, cur)
		}
		cur, size = nil, 0
	}
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`,;()[]{}<>:.|\\", r)
	}) {
		// a chunk as long as the one before it belongs to the run even
		// without a sign of its own (fixed-size chunking)
		if base64ish(tok) || (len(cur) > 0 && len(tok) == len(cur[len(cur)-1]) && base64Alphabet(tok)) {
			cur = append(cur, tok)
			size += len(tok)
			continue
		}
		flush()
	}
	flush()
	return runs
}

func base64ish(tok string) bool {
	if len(tok) < 4 {
		return false
	}
	signal := len(tok) >= 16
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c >= 'a' && c <= 'z':
		case c >= 'A' && c <= 'Z':
			signal = signal || i > 0
		case c >= '0' && c <= '9', c == '+', c == '/', c == '=', c == '-', c == '_':
			signal = true
		default:
			return false
		}
	}
	return signal
}

func base64Alphabet(tok string) bool {
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+/=-_", c) >= 0) {
			return false
		}
	}
	return true
}

func decodeBase64(s string) (string, bool) {
	s = strings.TrimRight(strings.ReplaceAll(s, "=", ""), "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		// a chunk boundary may carry stray bits; try without the last character
		if len(s) < 2 {
			return "", false
		}
		if b, err = enc.DecodeString(s[:len(s)-len(s)%4]); err != nil {
			return "", false
		}
	}
	return string(b), true
}

// readable reports text a model would read as words: valid UTF-8 of at
// least 6 characters, no controls but line breaks and tabs, and mostly
// letters and spaces.
func readable(s string) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) < 6 {
		return false
	}
	letters, n := 0, 0
	for _, r := range s {
		n++
		switch {
		case r == utf8.RuneError, r < 0x20 && r != '\n' && r != '\t' && r != '\r', r >= 0x7F && r < 0xA0:
			return false
		case unicode.IsLetter(r), r == ' ':
			letters++
		}
	}
	return letters*2 >= n
}
