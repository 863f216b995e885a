package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// Known is a secret whose exact value mcpguard knows: the value of a
// variable of the environment the server is started with, or the content
// of a file the policy lists. Source names it in rejections and logs (the
// variable's name or the file's path); it is never the value.
type Known struct {
	Source string
	Value  string
}

// MinKnownLen is the shortest value taken as a known secret: a shorter one
// would match ordinary text by chance.
const MinKnownLen = 8

// credentialName reports whether an environment variable's name says it
// holds a credential: *_TOKEN, *_KEY, *_SECRET, *_PAT, *_PASS, *_PASSWD,
// *_PWD, *_CREDENTIALS, *_AUTH, *PASSWORD*, *SECRET*, *API_KEY*,
// *ACCESS_KEY*, *PRIVATE_KEY*, *_TOKEN_* (case ignored). PWD and OLDPWD,
// the shell's working directories, are not credentials.
func credentialName(name string) bool {
	n := strings.ToUpper(name)
	switch n {
	case "PWD", "OLDPWD":
		return false
	}
	for _, suffix := range []string{"_TOKEN", "_KEY", "_SECRET", "_PAT", "_PASS", "_PASSWD", "_PWD",
		"_CREDENTIAL", "_CREDENTIALS", "_AUTH", "_APIKEY", "_SECRETS", "_TOKENS", "_KEYS"} {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	for _, part := range []string{"PASSWORD", "SECRET", "API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "_TOKEN_", "AUTH_TOKEN"} {
		if strings.Contains(n, part) {
			return true
		}
	}
	return n == "TOKEN" || n == "PASSWORD" || n == "SECRET"
}

// FromEnvironment returns the known secrets of an environment (os.Environ
// form, NAME=value): the values of variables whose names look like
// credentials (see credentialName) and of those listed by name, at least
// MinKnownLen bytes long. A value that is an absolute path (a key file's
// location, not the key) is left out unless the variable is listed.
func FromEnvironment(environ []string, listed []string) []Known {
	want := map[string]bool{}
	for _, n := range listed {
		want[n] = true
	}
	var out []Known
	seen := map[string]bool{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(value) < MinKnownLen || seen[value] {
			continue
		}
		if !want[name] && (!credentialName(name) || looksLikePath(value)) {
			continue
		}
		seen[value] = true
		out = append(out, Known{Source: name, Value: value})
	}
	return out
}

func looksLikePath(v string) bool {
	return strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \t\n")
}

// encodings returns the forms of a known secret that the index looks for:
// the value itself, as JSON writes it inside a string, as hex (either
// case; a hex or UUID value also itself in either case and without
// dashes), and the part of its base64 encoding (standard and URL
// alphabets) that does not depend on the bytes around it, for each of the three
// alignments it may have inside a longer encoded text. Percent-encoding is
// undone by the scanner before it looks, so it needs no form of its own.
func encodings(v string) []needle {
	var out []needle
	add := func(text string, fold bool) {
		if len(text) < 2 {
			return
		}
		if fold {
			text = strings.ToLower(text)
		}
		for _, n := range out {
			if n.text == text && n.fold == fold {
				return
			}
		}
		out = append(out, needle{text: text, fold: fold})
	}
	add(v, false)
	if hexShaped(v) {
		// Hex and UUIDs are written in either case, UUIDs also without
		// their dashes.
		add(v, true)
		add(strings.ReplaceAll(v, "-", ""), true)
	}
	if j := jsonEscape(v); j != v {
		add(j, false)
	}
	add(hex.EncodeToString([]byte(v)), true)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := 0; pad < 3; pad++ {
			e := enc.EncodeToString([]byte(strings.Repeat("\x00", pad) + v))
			from := (8*pad + 5) / 6
			to := (8 * (pad + len(v))) / 6
			if to-from >= MinKnownLen {
				add(e[from:to], false)
			}
		}
	}
	return out
}

// hexShaped reports whether v is hex digits, dashes between them
// allowed (a UUID).
func hexShaped(v string) bool {
	for i := 0; i < len(v); i++ {
		if !rawjson.IsHex(v[i]) && v[i] != '-' {
			return false
		}
	}
	return true
}

// jsonEscape writes s as the body of a JSON string the way encoders do:
// quote, backslash and controls escaped, nothing else.
func jsonEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			const hexdigits = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hexdigits[c>>4])
			b.WriteByte(hexdigits[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
