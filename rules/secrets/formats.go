package secrets

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// ownRules are mcpguard's credential formats beyond gitleaks': the files
// and strings a credential lives in on a developer's machine, which
// gitleaks' rules (written for source code) miss. Each stops a leak the
// issue tracker measured: ~/.aws/credentials read back with the secret
// key in clear, a database URL with its password, .netrc, .pgpass, a
// Docker or kubeconfig file, an Azure connection string, a GCP service
// account key, an HTTP Authorization header. A value that is a
// placeholder (see placeholder) is not a credential.
var ownRules = []ruleSpec{
	{id: "aws-secret-access-key", regex: `(?i)\b[A-Z0-9_]*secret_?access_?key\\?["']?\s*[:=]\s*\\?["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`,
		secretGroup: 1, keywords: []string{"secret_access_key", "secretaccesskey"}},
	{id: "aws-session-token", regex: `(?i)session_?token\\?["']?\s*[:=]\s*\\?["']?([A-Za-z0-9/+=]{100,})`,
		secretGroup: 1, keywords: []string{"session_token", "sessiontoken"}},
	{id: "credential-assignment", regex: `(?i)\b([A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|_PAT|_PWD|_PASS))\\?["']?[ \t]*[:=][ \t]*\\?["']?([^\s"'\x60;,()\[\]{}<>\\:]{8,200})(?:[\s"'\x60;,&#\\]|$)`,
		secretGroup: 2, keywords: []string{"password", "passwd", "secret", "token", "api_key", "apikey", "access_key", "accesskey", "private_key", "credential", "_pat", "_pwd", "_pass"}},
	{id: "url-password", regex: `\b[A-Za-z][A-Za-z0-9+.-]{1,20}://([^\s:/?#@"'\x60<>]{1,128}):([^\s/?#@"'\x60<>]{1,256})@[A-Za-z0-9\[._-]`,
		secretGroup: 2, keywords: []string{"://"}},
	{id: "netrc-password", regex: `(?i)\b(?:machine|login|default)\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S{4,})`,
		secretGroup: 1, keywords: []string{"password"}},
	{id: "pgpass-password", regex: `(?:^|\s)[^\s:#]+:(?:\d+|\*):[^\s:]+:[^\s:]+:([^\s:]{4,})(?:\s|$)`,
		secretGroup: 1, keywords: []string{":5432:", ":*:"}},
	{id: "docker-config-auth", regex: `"auth\\?"\s*:\s*\\?"([A-Za-z0-9+/]{8,}={0,2})\\?"`,
		secretGroup: 1, keywords: []string{`"auth`}},
	{id: "kubeconfig-client-key", regex: `client-key-data\\?["']?\s*:\s*\\?["']?([A-Za-z0-9+/]{20,}={0,2})`,
		secretGroup: 1, keywords: []string{"client-key-data"}},
	{id: "azure-account-key", regex: `(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`,
		secretGroup: 1, keywords: []string{"accountkey=", "sharedaccesskey="}},
	{id: "gcp-private-key-id", regex: `"private_key_id\\?"\s*:\s*\\?"([a-f0-9]{40})\\?"`,
		secretGroup: 1, keywords: []string{`"private_key_id`}},
	{id: "authorization-header", regex: `(?i)\b(?:Authorization|Proxy-Authorization)\\?["']?\s*[:=]\s*\\?["']?(?:Basic|Bearer|Token|Digest)\s+([A-Za-z0-9._~+/-]{8,}=*)`,
		secretGroup: 1, keywords: []string{"authorization"}},
	{id: "bearer-token", regex: `\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)`,
		secretGroup: 1, keywords: []string{"bearer"}},
	{id: "private-key-tail", regex: `-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`,
		keywords: []string{"-----end"}},
}

// ownValid holds, for own rules, what a value must also be to count.
var ownValid = map[string]func(secret, match string) bool{
	"aws-secret-access-key": func(secret, _ string) bool { return !placeholder(secret) },
	"credential-assignment": func(secret, match string) bool {
		name := match
		if i := strings.IndexAny(name, "\"' \t:="); i >= 0 {
			name = name[:i]
		}
		return credentialName(name) && !camelCase(name) && secretLike(secret)
	},
	"url-password": func(secret, match string) bool {
		user := match[strings.Index(match, "://")+3:]
		user = user[:strings.IndexByte(user, ':')]
		return !placeholder(secret) && secret != user && !templated(user)
	},
	"netrc-password":       func(secret, _ string) bool { return !placeholder(secret) },
	"pgpass-password":      func(secret, _ string) bool { return !placeholder(secret) },
	"authorization-header": func(secret, _ string) bool { return !placeholder(secret) && !placeholderBasic(secret) },
	"bearer-token":         func(secret, _ string) bool { return !placeholder(secret) && secretLike(secret) },
	"docker-config-auth": func(secret, _ string) bool {
		d, err := base64.StdEncoding.DecodeString(secret)
		return err == nil && strings.IndexByte(string(d), ':') > 0 && !placeholder(string(d[strings.IndexByte(string(d), ':')+1:]))
	},
}

// placeholders are the values documentation writes where a credential
// goes; a value made of one of them (with digits, _ or - around) is not
// a credential.
var placeholderRe = lazyregexp.New(`(?i)^[_\-.*]*(?:my|your|the|some|example|sample|dummy|fake|test|default|new|old)?[_\-.]?` +
	`(?:pass(?:word|wd)?|pwd|secret|changeme|change[_-]?me|example|placeholder|redacted|hidden|xxx+|\*+|none|null|nil|empty|` +
	`token|key|api[_-]?key|password[_-]?here|secret[_-]?here|token[_-]?here|value|foo|bar|baz|foobar|test|user(?:name)?|admin|root|guest|postgres|mysql|hunter2|letmein|qwerty|abc123|123456+|` +
	`open[_-]?sesame|string|str|bytes|int|bool)` +
	`[_\-.]?(?:here|goes[_-]?here|\d{0,4})[_\-.*]*$`)

// placeholder reports whether a value is a stand-in, not a credential:
// a placeholder word, a value that says it is an example, a template or variable reference (${DB_PASSWORD},
// $TOKEN, {{ .token }}, <token>, %(password)s), or one character
// repeated (xxxxxxxx, ********).
func placeholder(v string) bool {
	// AWS's documentation key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY.
	if v == "" || templated(v) || placeholderRe().MatchString(v) || strings.Contains(strings.ToLower(v), "example") || rfcExamples[v] {
		return true
	}
	return strings.Count(v, v[:1]) == len(v)
}

// rfcExamples are the credentials RFC 6749 (OAuth 2.0) and RFC 7617
// (Basic) publish as examples, which documentation copies.
var rfcExamples = map[string]bool{
	"2YotnFZFEjr1zCsicMWpAA": true, "tGzv3JOkF0XG5Qx2TlKWIA": true, "czZCaGRSa3F0MzpnWDFmQmF0M2JW": true,
	"SplxlOBeZQQYbYS6WxSbIA": true, "8xLOxBtZp8": true, "gX1fBat3bV": true, "QWxhZGRpbjpvcGVuIHNlc2FtZQ==": true,
}

func templated(v string) bool {
	return strings.HasPrefix(v, "$") || strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "<") ||
		strings.HasPrefix(v, "%(") || strings.HasPrefix(v, "%s") || strings.Contains(v, "${") ||
		strings.HasPrefix(v, "[") || strings.HasPrefix(v, "...")
}

// identPath matches what code assigns to a credential-named variable
// without it being one: a name without digits, or a dotted path
// (os.environ, self.token, ed25519.Ed25519PrivateKey).
var identPath = lazyregexp.New(`^[A-Za-z_][A-Za-z_]*$|^[A-Za-z_&*][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// secretLike reports whether an assigned value looks like a secret
// rather than code or prose: not a placeholder, not a name or dotted
// path, and holding a digit, a symbol or both cases.
func secretLike(v string) bool {
	if placeholder(v) || identPath().MatchString(v) {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "required", "optional", "string", "boolean":
		return false
	}
	return strings.ContainsAny(v, "0123456789!@#$%^&*+/=~.-_") || (strings.ToLower(v) != v && strings.ToUpper(v) != v)
}

// ownQuick holds, for own rules whose keywords are common words, a test
// of the bytes after a keyword at [at, at+n) that every match passes:
// a hit that fails it costs no regex run, and text full of the word
// (prose about tokens, a page of URLs) is never too dense to scan.
var ownQuick = map[string]func(s string, at, n int) bool{
	"aws-secret-access-key": assignedAfter,
	"aws-session-token":     assignedAfter,
	"credential-assignment": credentialAfter,
	"authorization-header":  assignedAfter,
	"url-password":          userinfoAfter,
	"netrc-password":        netrcAround,
	"bearer-token":          valueAfterSpace,
	// Lob's key is its keyword and 35 hex digits: a file list full of
	// "test_" paths (Boost's copyright file has 1,200 in 2 MB) is not
	// searched line by line.
	"lob-api-key": hexAfter(35),
	// A .pgpass line's port field follows its host name.
	"pgpass-password": hostBefore,
}

// hostBefore reports whether a host name ([^\s:#]) ends where the
// keyword starts.
func hostBefore(s string, at, _ int) bool {
	return at > 0 && !isSpace(s[at-1]) && s[at-1] != ':' && s[at-1] != '#'
}

// hexAfter is a quick test: the keyword is followed by n hex digits.
func hexAfter(n int) func(s string, at, k int) bool {
	return func(s string, at, k int) bool {
		i := at + k
		if i+n > len(s) {
			return false
		}
		for _, c := range []byte(s[i : i+n]) {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
}

// assignedAfter reports whether the name that a keyword ends or starts
// is assigned a value: name bytes, quotes, blanks and line ends (the
// regexes' \s* reads any number), then = or :. Quotes and blanks may be
// JSON escapes (\", \t, \n), which the regex reads decoded.
func assignedAfter(s string, at, n int) bool {
	i := at + n
	for i < len(s) && i-at < 64 && (isWordByte(s[i]) || s[i] == '-') {
		i++
	}
	for i < len(s) {
		switch {
		case strings.IndexByte("\"' \t\n\f\r", s[i]) >= 0:
			i++
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\tnfr`, s[i+1]) >= 0:
			i += 2
		case s[i] == '\\':
			i++ // a backslash of the text (the regexes' \\?)
		default:
			return s[i] == '=' || s[i] == ':'
		}
	}
	return false
}

// credentialAfter reports whether the name that a keyword ends or
// starts is assigned a value credential-assignment can match: after the
// operator, blanks and one backslash and quote, 8 to 200 value
// characters and then the end of the value (a blank, quote, ;, &, #,
// backslash or the end of the text). A value that runs on past 200
// characters (a flood of "sharedaccesskey=") cannot match, and costs
// no backtracking regex run per hit. A backslash passes: in raw JSON it
// starts an escape the regex reads decoded.
func credentialAfter(s string, at, n int) bool {
	if !assignedAfter(s, at, n) {
		return false
	}
	i := at + n
	for s[i] != '=' && s[i] != ':' {
		i++
	}
	for i++; i < len(s) && (s[i] == ' ' || s[i] == '\t'); i++ {
	}
	if i < len(s) && (s[i] == '\\' || s[i] == '"' || s[i] == '\'') {
		if s[i] == '\\' {
			return true
		}
		i++
	}
	if w := s[i:min(len(s), i+201)]; len(w) == 201 && asciiOnly(w) {
		// The common case, read by byte sets: the value's first byte
		// that is not a value character, and whether an end (or a
		// backslash) comes before it, from the 9th byte on.
		e := strings.IndexAny(w, " \t\n\f\r\"'`;,()[]{}<>\\:")
		if e < 0 {
			e = len(w)
		}
		if e < 8 {
			return w[e] == '\\'
		}
		return e <= 200 || strings.ContainsAny(w[8:e], "&#")
	}
	for k := 0; ; k++ {
		if i >= len(s) {
			return k >= 8
		}
		c := s[i]
		if c == '\\' || k >= 8 && valueByte[c]&valueEnd != 0 {
			return true
		}
		if k == 200 || valueByte[c]&valueChar == 0 {
			return false
		}
		_, w := runeAt(s, i)
		i += w
	}
}

func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// valueByte classifies the bytes of credential-assignment's value: a
// character of it ([^\s"'\x60;,()\[\]{}<>\\:], every byte of a
// character beyond ASCII included), and one that may end it
// ([\s"'\x60;&#\\]).
var valueByte = func() (t [256]uint8) {
	for c := range t {
		if strings.IndexByte(" \t\n\f\r\"'`;,()[]{}<>\\:", byte(c)) < 0 {
			t[c] |= valueChar
		}
		if strings.IndexByte(" \t\n\f\r\"'`;&#\\", byte(c)) >= 0 {
			t[c] |= valueEnd
		}
	}
	return t
}()

const (
	valueChar = 1 << iota
	valueEnd
)

// userinfoAfter reports whether the authority after :// holds a
// user:password@ part: at most 128 and 256 characters of 4 bytes at
// most, a backslash among them (the regex admits one; in raw JSON it
// starts an escape).
func userinfoAfter(s string, at, n int) bool {
	end := min(len(s), at+n+(128+256)*utf8.UTFMax+2)
	colon := false
	for i := at + n; i < end; i++ {
		switch s[i] {
		case ':':
			colon = true
		case '@':
			return colon
		case '/', '?', '#', ' ', '\t', '\n', '\r', '"', '\'', '<', '>':
			return false
		}
	}
	return false
}

// valueAfterSpace reports whether blanks (\s: space, tab, line ends, form
// feed; maybe JSON escapes, which the regex reads decoded) and then a
// value follow.
func valueAfterSpace(s string, at, n int) bool {
	i := at + n
	j := i
	for j < len(s) {
		if isSpace(s[j]) {
			j++
		} else if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("tnfr", s[j+1]) >= 0 {
			j += 2
		} else {
			break
		}
	}
	return j > i && j < len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// netrcAround reports whether a password keyword stands as in a .netrc:
// a value after blanks, and before it blanks, one word (the login, or
// the machine when a login word follows it), blanks, and a word that
// ends in machine, login or default. The blanks before it are read as
// they are (a login may hold a backslash: CORP\tom) and also with the
// JSON escapes \t \n \f \r as blanks (a .netrc's lines end in \n in a
// raw message); either reading passing runs the regex.
func netrcAround(s string, at, n int) bool {
	return valueAfterSpace(s, at, n) && (netrcBefore(s, at, false) || netrcBefore(s, at, true))
}

// netrcBefore is netrcAround's reading of what comes before the keyword
// at at; escapes: a JSON escape of a blank is a blank.
func netrcBefore(s string, at int, escapes bool) bool {
	i := at
	for _, space := range []bool{true, false, true} {
		j := i
		for j > 0 {
			w := blankBefore(s, j, escapes)
			if (w > 0) != space {
				break
			}
			j -= max(w, 1)
		}
		if j == i {
			return false
		}
		i = j
	}
	word := strings.ToLower(s[max(0, i-len("machine")):i])
	return strings.HasSuffix(word, "machine") || strings.HasSuffix(word, "login") || strings.HasSuffix(word, "default")
}

// blankBefore is the length of the blank that ends at s[j-1]: 1 for a
// blank byte, 2 for a JSON escape of one (\t, \n, \f, \r) when escapes
// is set, 0 for none.
func blankBefore(s string, j int, escapes bool) int {
	switch {
	case isSpace(s[j-1]):
		return 1
	case escapes && j >= 2 && s[j-2] == '\\' && strings.IndexByte("tnfr", s[j-1]) >= 0:
		return 2
	}
	return 0
}

// camelCase reports whether a name has a lower-case letter followed by a
// capital (sharedSecret, SharedSecret): a name in code, where a value is
// a test vector as often as a credential, and where gitleaks' format
// rules judge the values that have a known shape. Configuration and
// environment names (DB_PASSWORD, db_password, client-secret, token) are
// not camel case.
func camelCase(name string) bool {
	for i := 1; i < len(name); i++ {
		if name[i-1] >= 'a' && name[i-1] <= 'z' && name[i] >= 'A' && name[i] <= 'Z' {
			return true
		}
	}
	return false
}

// placeholderBasic reports whether a Basic credential decodes to a
// user and a placeholder password (RFC 7617's Aladdin:open sesame).
func placeholderBasic(v string) bool {
	d, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return false
	}
	_, pw, ok := strings.Cut(string(d), ":")
	return ok && placeholder(strings.ReplaceAll(pw, " ", ""))
}
