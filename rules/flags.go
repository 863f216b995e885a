package rules

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// DangerousFlags rejects command-line arguments that turn on a listed flag
// of the underlying tool: flags that load code or configuration chosen by
// the caller (pytest --rootdir, java -D, node --require). It stops argument
// injection (CWE-88) through the evasions a tool, a shell or a normaliser
// would undo:
//
//   - any case: --ROOTDIR;
//   - camelCase for kebab-case and the reverse, and '_' for '-': yargs
//     (jest) and commander read --root-dir as --rootDir, argparse (pytest)
//     reads --cov_config as nothing but a tool that normalises names
//     might; so --rootDir, --root-dir, --root_dir, --rootdir and --ROOT-DIR
//     are one flag. The comparison drops every '-' and '_' inside the name
//     and folds case, whichever spelling the policy lists;
//   - yargs dot notation (--projects.0=x sets projects): the name is also
//     judged up to its first '.';
//   - abbreviation to any prefix of two characters or more (--root, --ro):
//     argparse and getopt_long accept unambiguous abbreviations, and which
//     ones are unambiguous depends on the tool's own flags (yargs and Go's
//     flag package do not abbreviate: see WithoutAbbreviations);
//   - an attached value (--rootdir=/tmp);
//   - more than two leading dashes, and the single-dash form of a listed long
//     flag (-rootdir, as Go's flag package reads it);
//   - Unicode dashes and minus signs for '-' (U+2010..U+2015, U+2212,
//     U+FE58, U+FE63, U+FF0D, ...), fullwidth letters, and invisible
//     characters (soft hyphen, zero-width space, bidi controls) anywhere;
//   - a listed short prefix at the start (-Dx, -D, -D=x), inside a cluster
//     of short flags (-vqDx reads as -v -q -D x) up to the first option
//     that takes a value (WithValueShorts), or spelt as a long flag
//     the way Go's flag package allows (--D=x); short prefixes are
//     case-sensitive, -D and -d differ in most tools;
//   - a response file (@file), which can smuggle in any flag;
//   - a value that a server joins into a command line: the check looks at
//     every whitespace-separated word of the value, with quotes and
//     backslashes removed as a shell would remove them (so "x --rootdir"
//     and '"--root"dir' are rejected too).
//
// A value that is not valid UTF-8 is rejected as well (an overlong or
// truncated sequence may be decoded into a dash by a lenient reader).
//
// Benign values pass: -v, -5, a lone - or --, --count=3, --r (one letter is
// not an abbreviation this check accepts as one), plain words, ./a-b.
// Scoped npm names (@scope/pkg) start with '@' and are rejected; select them
// with another field or check.
type DangerousFlags struct {
	long  []longFlag
	short []shortFlag
	// exactLong refuses long flags only when spelled whole, for tools whose
	// parser does not accept abbreviations (Go's flag package); see
	// WithoutAbbreviations.
	exactLong bool
	// valueShorts holds the letters of short options that take a value;
	// see WithValueShorts.
	valueShorts string
}

// WithValueShorts names the tool's short options that take a value, such
// as pytest's -r, -k and -m: in a cluster, what follows one of them is its
// value, not more options (argparse and getopt read -rfEp as -r fEp, so -p
// is not in it), and d stops looking for listed short prefixes there. Each
// entry is '-' and one letter or digit.
func (d *DangerousFlags) WithValueShorts(shorts []string) error {
	for _, s := range shorts {
		if len(s) != 2 || s[0] != '-' || !isAlnum(s[1]) {
			return fmt.Errorf("short option with a value %q: want - and one letter or digit (such as -r)", s)
		}
		d.valueShorts += s[1:]
	}
	return nil
}

// WithoutAbbreviations makes d refuse a listed long flag only when it is
// spelled whole (in any of the other spellings): --cover then passes where
// --coverprofile is listed. Only for tools that do not accept
// abbreviations, such as those parsing flags with Go's flag package;
// argparse and getopt_long read --cover as --coverprofile when it is the
// only flag that starts so.
func (d *DangerousFlags) WithoutAbbreviations() { d.exactLong = true }

type longFlag struct {
	name   string // flagKey of the name without the leading "--"
	listed string // as written in the policy
}

type shortFlag struct {
	body   string // after the leading '-', case kept
	listed string
}

const flagRemediation = "Remove the rejected flag. Run the tool directly, outside MCP, for trusted use."

// NewDangerousFlags compiles the listed flags. A long flag is "--" followed
// by at least two characters from [A-Za-z0-9._-], the first one a letter or
// digit; a short prefix is '-' followed by one or more characters from
// [A-Za-z0-9._:+=], the first one not a '-' (-D, -I, -XX:).
func NewDangerousFlags(long []string, shortPrefixes []string) (*DangerousFlags, error) {
	d := &DangerousFlags{}
	for _, l := range long {
		name, ok := strings.CutPrefix(l, "--")
		if !ok || len(name) < 2 || !isAlnum(name[0]) || !onlyFrom(name, "._-") {
			return nil, fmt.Errorf("long flag %q: want -- and at least two letters, digits, '.', '_' or '-' (such as --rootdir)", l)
		}
		key := flagKey(name)
		if len(key) < 2 {
			return nil, fmt.Errorf("long flag %q: want at least two letters or digits besides '-' and '_'", l)
		}
		d.long = append(d.long, longFlag{name: key, listed: l})
	}
	for _, s := range shortPrefixes {
		body, ok := strings.CutPrefix(s, "-")
		if !ok || body == "" || !isAlnum(body[0]) || !onlyFrom(body, "._:+=") {
			return nil, fmt.Errorf("short prefix %q: want - and a letter or digit, then letters, digits or ._:+= (such as -D)", s)
		}
		d.short = append(d.short, shortFlag{body: body, listed: s})
	}
	return d, nil
}

// Check rejects value if any word of it would turn on a listed flag or name
// a response file.
func (d *DangerousFlags) Check(value string) *Finding {
	if isASCII(value) {
		return d.checkASCIIWords(value)
	}
	if !utf8.ValidString(value) {
		return reject(codes.DangerousFlag, "argument is not valid UTF-8; a lenient decoder may read a dash in it", flagRemediation)
	}
	return d.checkWords(value)
}

// checkWords splits value into words as a server might and judges each.
func (d *DangerousFlags) checkWords(value string) *Finding {
	for word := range strings.FieldsFuncSeq(value, isArgSeparator) {
		if f := d.checkWord(normaliseWord(word)); f != nil {
			return f
		}
	}
	return nil
}

// checkASCIIWords is checkWords for an ASCII value, without decoding runes.
// For ASCII, normaliseWord only drops quotes and backslashes, and checkWord
// passes a word that does not start with '-' or '@'; so only a word whose
// lead (its first byte other than a quote or backslash) is '-' or '@' can
// be a flag. It finds those leads with vectorised searches for '-' and '@'
// instead of looking at every byte, and judges their words left to right.
// FuzzFlagsASCIIPath holds it equal to checkWords.
func (d *DangerousFlags) checkASCIIWords(value string) *Finding {
	next := [2]int{indexFrom(value, 0, '-'), indexFrom(value, 0, '@')}
	for {
		p := next[0]
		if p < 0 || (next[1] >= 0 && next[1] < p) {
			p = next[1]
		}
		if p < 0 {
			return nil
		}
		// The word's start, if only quoting stands between it and p.
		start := p
		for start > 0 && asciiWordByte[value[start-1]]&quoting != 0 {
			start--
		}
		resume := p + 1
		if start == 0 || asciiWordByte[value[start-1]]&separator != 0 {
			end := p + 1
			for end < len(value) && asciiWordByte[value[end]]&separator == 0 {
				end++
			}
			if f := d.checkWord(normaliseWord(value[start:end])); f != nil {
				return f
			}
			resume = end // no other lead in this word
		}
		for k, c := range [2]byte{'-', '@'} {
			if next[k] >= 0 && next[k] < resume {
				next[k] = indexFrom(value, resume, c)
			}
		}
	}
}

// indexFrom is the index of the first c in s at or after from, or -1.
func indexFrom(s string, from int, c byte) int {
	if from >= len(s) {
		return -1
	}
	if i := strings.IndexByte(s[from:], c); i >= 0 {
		return from + i
	}
	return -1
}

// Classes of ASCII bytes in a word, for checkASCIIWords.
const (
	separator = 1 << iota // isArgSeparator: split words
	quoting               // '"', '\'' and '\\': dropped by normaliseWord
)

var asciiWordByte = func() (t [256]uint8) {
	for c := range utf8.RuneSelf {
		if isArgSeparator(rune(c)) {
			t[c] |= separator
		}
	}
	t['"'] |= quoting
	t['\''] |= quoting
	t['\\'] |= quoting
	return t
}()

// checkWord judges one normalised word.
func (d *DangerousFlags) checkWord(w string) *Finding {
	if w == "" {
		return nil
	}
	if w[0] == '@' {
		return reject(codes.DangerousFlag,
			"response file arguments (@file) can smuggle any flag into the underlying tool; not allowed from MCP input",
			"Pass the arguments themselves, not a response file. Run the tool directly, outside MCP, for trusted use.")
	}
	if len(w) < 2 || w[0] != '-' {
		return nil
	}
	if w[1] == '-' {
		name := strings.TrimLeft(w, "-")
		name, _, _ = strings.Cut(name, "=")
		for _, s := range d.short {
			if name == s.body { // Go's flag package reads --D=x as -D=x
				return flagFinding(s.listed)
			}
		}
		return d.checkLongName(name)
	}
	body := w[1:]
	for _, s := range d.short {
		if strings.HasPrefix(body, s.body) {
			return flagFinding(s.listed)
		}
	}
	cluster := body[:alnumRun(body)]
	for i := 1; i < len(cluster); i++ {
		if strings.IndexByte(d.valueShorts, cluster[i-1]) >= 0 {
			break // the rest of the cluster is that option's value
		}
		for _, s := range d.short {
			if strings.HasPrefix(cluster[i:], s.body) {
				return flagFinding(s.listed)
			}
		}
	}
	name, _, _ := strings.Cut(body, "=")
	var buf [64]byte
	return d.matchLong(appendFlagKey(buf[:0], name), false)
}

// checkLongName judges the name of a word that starts with two dashes (or
// more), its value cut off; see matchLong.
func (d *DangerousFlags) checkLongName(name string) *Finding {
	var buf [64]byte
	return d.matchLong(appendFlagKey(buf[:0], name), !d.exactLong)
}

// matchLong judges the key n of a name: the whole key, the key up to its
// first '.' (yargs dot notation), and with prefixes every prefix of two
// characters or more.
func (d *DangerousFlags) matchLong(n []byte, prefixes bool) *Finding {
	if len(n) < 2 {
		return nil
	}
	base, dotted := n, false
	if i := bytes.IndexByte(n, '.'); i >= 0 {
		base, dotted = n[:i], true
	}
	for _, l := range d.long {
		switch {
		case l.name == string(n), dotted && l.name == string(base):
			return flagFinding(l.listed)
		case !prefixes:
		case hasPrefix(l.name, n), dotted && len(base) >= 2 && hasPrefix(l.name, base):
			return flagFinding(l.listed)
		}
	}
	return nil
}

// hasPrefix is strings.HasPrefix for a byte slice prefix, without
// converting it.
func hasPrefix(s string, prefix []byte) bool {
	return len(s) >= len(prefix) && s[:len(prefix)] == string(prefix)
}

func flagFinding(listed string) *Finding {
	return reject(codes.DangerousFlag,
		"flag "+listed+" can load arbitrary code via the underlying tool; not allowed from MCP input",
		flagRemediation)
}

// normaliseWord undoes what a tool, shell or normaliser may undo: it drops
// invisible characters, quotes and backslashes, maps compatibility forms to
// ASCII and every dash-like rune to '-'. Case and '_' are kept (short
// prefixes are case-sensitive); flagKey handles them for long flags.
func normaliseWord(w string) string {
	if isASCII(w) && !hasQuoting(w) {
		return w
	}
	var b strings.Builder
	b.Grow(len(w))
	for _, r := range w {
		r = compatASCII(r)
		switch {
		case r == '"' || r == '\'' || r == '\\' || canon.Invisible(r):
			continue
		case isDashLike(r):
			r = '-'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// flagKey folds a long flag name to the key its spellings share: lower
// case, including the non-ASCII runes that case-fold to an ASCII letter (K
// KELVIN SIGN, ſ LONG S), without '-' and '_' (--root-dir, --root_dir and
// --rootDir all become rootdir).
func flagKey(name string) string {
	if foldedASCII(name) {
		return name
	}
	return string(appendFlagKey(nil, name))
}

// appendFlagKey appends flagKey(name) to dst.
func appendFlagKey(dst []byte, name string) []byte {
	if foldedASCII(name) {
		return append(dst, name...)
	}
	for _, r := range name {
		switch {
		case r == '_' || r == '-':
			continue
		case r >= 'A' && r <= 'Z':
			r += 'a' - 'A'
		case r == 'İ' || r == 'ı':
			// Dotted capital I and dotless i: Go's unicode.ToLower maps İ
			// to i and Python's "ı".upper() is I, so a tool comparing
			// flags case-insensitively reads them as i.
			r = 'i'
		case r >= utf8.RuneSelf:
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if f < utf8.RuneSelf {
					r = unicode.ToLower(f)
					break
				}
			}
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

// hasQuoting reports whether s holds a quote or a backslash.
func hasQuoting(s string) bool {
	for i := 0; i < len(s); i++ {
		if asciiWordByte[s[i]]&quoting != 0 {
			return true
		}
	}
	return false
}

// foldedASCII reports whether s is ASCII without upper-case letters, '-'
// or '_': flagKey would return it unchanged.
func foldedASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' || c == '_' || c == '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// alnumRun is the length of the leading run of ASCII letters and digits.
func alnumRun(s string) int {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return i
		}
	}
	return len(s)
}

// onlyFrom reports whether s consists of ASCII letters, digits and the
// bytes in extra.
func onlyFrom(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}
