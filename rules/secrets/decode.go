package secrets

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"html"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/width"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// This file is the one decoding pipeline both directions search through:
// the rules and known secrets run on the text, then on its readings.
//
// A reading undoes, in one pass, the escapes that hide a credential
// character by character: percent-encoding, literal \uXXXX, \UXXXXXXXX,
// \u{X} and \xHH text and the one-letter escapes (JSON, JavaScript,
// Python and C escapes, any code point), HTML character references, invisible format characters and
// soft hyphens (canon.Invisible), and fullwidth forms
// (golang.org/x/text/width). The pass repeats while it changes anything,
// up to maxRounds times (a 4x percent-encoded token). Then every run of
// base64 (standard or URL alphabet, padded or not, wrapped into lines),
// hex (either case, bare or with ':', '-' or space between the bytes)
// or base32 is decoded, and the decoded text is searched the same way,
// up to maxDepth encodings deep. Every reading is no longer than the
// text it reads, and each depth at most doubles the bytes read, so the
// whole is linear in the text.

const (
	// maxRounds bounds the escape-undoing passes of one reading.
	maxRounds = 4
	// maxDepth bounds how many base64/hex/base32 layers are decoded.
	maxDepth = 3
	// minEncodedRun is the shortest run decoded as base64, hex or base32
	// (padding included): 20 bytes of text in base64, an AWS access key
	// id. The raw check's word grid (nextTextRun) sees every run of 23
	// bytes or more, so both checks read the same runs.
	minEncodedRun = 27
)

// mark is a piece of a reading that does not copy its source byte for
// byte: the decoded bytes [dec, dec+n) come from the source bytes
// [src, src+srcN). Between marks a reading copies its source.
type mark struct{ dec, n, src, srcN int }

// reading is a decoded form of a text and how to map its offsets back.
type reading struct {
	text  string
	marks []mark // ascending by dec
}

// source maps the bytes [start, end) of the reading to the smallest span
// of its source they come from.
func (r *reading) source(start, end int) (int, int) {
	return r.offset(start, false), r.offset(end, true)
}

func (r *reading) offset(d int, end bool) int {
	i := sort.Search(len(r.marks), func(i int) bool { return r.marks[i].dec > d }) - 1
	if i < 0 {
		return d
	}
	m := r.marks[i]
	switch {
	case d == m.dec:
		return m.src
	case d < m.dec+m.n:
		if end {
			return m.src + m.srcN
		}
		return m.src
	}
	return m.src + m.srcN + d - (m.dec + m.n)
}

// escapeStart marks the bytes that may start an escape a reading undoes.
var escapeStart = func() (t [256]bool) {
	t['%'], t['\\'], t['&'] = true, true, true
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// mayHideEscapes reports whether s holds a byte that may start an escape
// of a reading (cheap: most of it is strings.IndexByte).
func mayHideEscapes(s string) bool {
	return strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '\\') >= 0 ||
		strings.IndexByte(s, '&') >= 0 || !isASCII(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// unescapeOnce undoes one layer of every escape a reading knows; ok is
// false when there was none.
func unescapeOnce(s string) (reading, bool) {
	var b []byte
	var marks []mark
	last := 0 // s[last:i] is still to copy
	emit := func(i, srcN int, out []byte) {
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[last:i]...)
		marks = append(marks, mark{dec: len(b), n: len(out), src: i, srcN: srcN})
		b = append(b, out...)
		last = i + srcN
	}
	var buf [8]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escapeStart[c] {
			continue
		}
		switch {
		case c == '%':
			if i+2 < len(s) && rawjson.IsHex(s[i+1]) && rawjson.IsHex(s[i+2]) {
				buf[0] = rawjson.Unhex(s[i+1])<<4 | rawjson.Unhex(s[i+2])
				emit(i, 3, buf[:1])
				i += 2
			}
		case c == '\\':
			if out, n := backslashEscape(s[i:], buf[:0]); n > 0 {
				emit(i, n, out)
				i += n - 1
			}
		case c == '&':
			if out, n := entity(s[i:]); n > 0 {
				emit(i, n, []byte(out))
				i += n - 1
			}
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError:
			case canon.Invisible(r):
				emit(i, n, nil)
			default:
				if nr := narrow(r); nr != r {
					emit(i, n, utf8.AppendRune(buf[:0], nr))
				}
			}
			i += n - 1
		}
	}
	if b == nil {
		return reading{}, false
	}
	b = append(b, s[last:]...)
	return reading{text: string(b), marks: marks}, true
}

// narrow returns the narrow (ASCII) form of a fullwidth character, the
// ideographic space as a space, and every other rune as it is.
func narrow(r rune) rune {
	if r < 0x3000 {
		return r
	}
	if r == 0x3000 {
		return ' '
	}
	p := width.LookupRune(r)
	if p.Kind() == width.EastAsianFullwidth {
		if n := p.Narrow(); n != 0 && n < utf8.RuneSelf {
			return n
		}
	}
	return r
}

// backslashEscape reads a literal escape at the start of s (\xHH, \uXXXX
// with a surrogate pair, \UXXXXXXXX, \u{X...}, and \\ \" \' \/ \n \r
// \t: JSON written inside text, as a tool that prints its environment
// as JSON does) and returns what it spells and its length; 0 when there
// is none.
func backslashEscape(s string, buf []byte) ([]byte, int) {
	if len(s) < 2 {
		return nil, 0
	}
	if len(s) < 4 && (s[1] == 'x' || s[1] == 'u' || s[1] == 'U') {
		return nil, 0
	}
	switch s[1] {
	case '\\', '"', '\'', '/':
		return append(buf, s[1]), 2
	case 'n':
		return append(buf, '\n'), 2
	case 'r':
		return append(buf, '\r'), 2
	case 't':
		return append(buf, '\t'), 2
	case 'x':
		if rawjson.IsHex(s[2]) && rawjson.IsHex(s[3]) {
			return append(buf, rawjson.Unhex(s[2])<<4|rawjson.Unhex(s[3])), 4
		}
	case 'u':
		if s[2] == '{' {
			end := strings.IndexByte(s[:min(len(s), 12)], '}')
			if end < 0 {
				return nil, 0
			}
			v, err := strconv.ParseUint(s[3:end], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return nil, 0
			}
			return utf8.AppendRune(buf, rune(v)), end + 1
		}
		r, ok := rawjson.Hex4(s[2:])
		if !ok {
			return nil, 0
		}
		if utf16.IsSurrogate(r) {
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2, ok := rawjson.Hex4(s[8:]); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return utf8.AppendRune(buf, d), 12
					}
				}
			}
			return nil, 0
		}
		return utf8.AppendRune(buf, r), 6
	case 'U':
		if len(s) >= 10 {
			if r, _, _, err := strconv.UnquoteChar(s[:10], 0); err == nil {
				return utf8.AppendRune(buf, r), 10
			}
		}
	}
	return nil, 0
}

// entity reads an HTML character reference at the start of s (&#65;,
// &#x41;, &amp; and the rest of HTML's named references) and returns what
// it spells and its length; 0 when there is none.
func entity(s string) (string, int) {
	if len(s) < 3 {
		return "", 0
	}
	end := 1
	if s[1] == '#' {
		end = 2
		if end < len(s) && (s[end] == 'x' || s[end] == 'X') {
			end++
		}
		for end < len(s) && end < 12 && rawjson.IsHex(s[end]) {
			end++
		}
	} else {
		for end < len(s) && end < 34 && isWordByte(s[end]) {
			end++
		}
	}
	if end < len(s) && s[end] == ';' {
		end++
	} else if s[1] != '#' {
		return "", 0 // a named reference needs its semicolon here
	}
	out := html.UnescapeString(s[:end])
	if out == s[:end] {
		return "", 0
	}
	return out, end
}

// encodedRun is a run of a text that may be base64, hex or base32: the
// bytes [lo, hi), line breaks of wrapped base64 included; sep is the
// separator of hex bytes written de:ad:be:ef (0: none).
type encodedRun struct {
	lo, hi int
	sep    byte
}

// b64Byte marks the bytes of either base64 alphabet (hex and base32
// digits are among them); '=' only ends a run.
var b64Byte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isWordByte(byte(c)) || c == '+' || c == '/' || c == '-'
	}
	return t
}()

// encodedRuns returns the runs of s that may be base64, hex or base32.
func encodedRuns(s string, each func(encodedRun) bool) {
	for i := 0; i < len(s); {
		if !b64Byte[s[i]] {
			i++
			continue
		}
		lo, width := i, 0
		for {
			line := i
			for i < len(s) && b64Byte[s[i]] {
				i++
			}
			for k := 0; k < 6 && i < len(s) && s[i] == '='; k++ { // base32 pads with up to 6
				i++
			}
			// A wrapped line: as wide as base64 is wrapped (PEM 64, MIME
			// 76), as wide as the lines before, ended by a line break and
			// followed by more.
			if n := i - line; (n == 64 || n == 76) && (width == 0 || n == width) {
				j := i
				if j < len(s) && s[j] == '\r' {
					j++
				}
				if j < len(s) && s[j] == '\n' && j+1 < len(s) && b64Byte[s[j+1]] {
					i, width = j+1, n
					continue
				}
			}
			break
		}
		if i-lo >= minEncodedRun && !each(encodedRun{lo, i, 0}) {
			return
		}
		if hexRun := sepHexRun(s, lo); hexRun > lo {
			if !each(encodedRun{lo, hexRun, s[lo+2]}) {
				return
			}
			i = hexRun
		}
	}
}

// sepHexStart returns where a run of separated hex bytes (see sepHexRun)
// that holds the byte at lo starts, reading back at most as many bytes
// as sepHexRun needs to find one: the finder may meet a run anywhere in
// it.
func sepHexStart(s string, lo int) int {
	var sep byte
	for n := 0; n < minEncodedRun/2 && lo >= 3; n++ {
		c := s[lo-1]
		if c != ':' && c != '-' && c != ' ' || sep != 0 && c != sep || !rawjson.IsHex(s[lo-3]) || !rawjson.IsHex(s[lo-2]) || lo >= 4 && rawjson.IsHex(s[lo-4]) {
			break
		}
		sep, lo = c, lo-3
	}
	return lo
}

// sepHexRun returns where a run of hex bytes separated by ':', '-' or a
// space (de:ad:be:ef) that starts at lo ends, or lo when there is none of
// at least minEncodedRun/2 bytes.
func sepHexRun(s string, lo int) int {
	if lo+2 >= len(s) || !rawjson.IsHex(s[lo]) || !rawjson.IsHex(s[lo+1]) {
		return lo
	}
	sep := s[lo+2]
	if sep != ':' && sep != '-' && sep != ' ' {
		return lo
	}
	n, i := 1, lo+2
	for i+2 < len(s) && s[i] == sep && rawjson.IsHex(s[i+1]) && rawjson.IsHex(s[i+2]) && (i+3 == len(s) || !rawjson.IsHex(s[i+3])) {
		i += 3
		n++
	}
	if n < minEncodedRun/2 {
		return lo
	}
	return i
}

// decodings returns the texts the run s may encode (n of them, at most
// two), decoded into buf when it holds decodeRoom(len(s)) bytes (a stack
// buffer stays on the stack), else into a new array; sep is the
// separator of hex bytes (0: none).
func decodings(s string, sep byte, buf []byte) (out [2][]byte, n int) {
	if len(buf) < decodeRoom(len(s)) {
		buf = make([]byte, decodeRoom(len(s)))
	}
	src := func(t string) []byte { return unsafe.Slice(unsafe.StringData(t), len(t)) } // read only
	if sep != 0 {
		flat := buf[:0]
		for i := 0; i < len(s); i++ {
			if s[i] != sep {
				flat = append(flat, s[i])
			}
		}
		d := buf[len(flat) : len(flat)+len(flat)/2]
		if k, err := hex.Decode(d, flat); err == nil && len(flat)%2 == 0 {
			out[0], n = d[:k], 1
		}
		return out, n
	}
	flat := s
	if containsEither(s, '\r', '\n') {
		b := buf[:0]
		for i := 0; i < len(s); i++ {
			if s[i] != '\r' && s[i] != '\n' {
				b = append(b, s[i])
			}
		}
		flat, buf = unsafe.String(unsafe.SliceData(b), len(b)), buf[len(b):]
	}
	rp := runPartsOf(flat)
	if rp.hex {
		d := buf[:len(flat)/2]
		if _, err := hex.Decode(d, src(flat)); err == nil {
			out[0], n = d, 1
		}
		return out, n
	}
	d := buf[:rp.enc.DecodedLen(len(rp.b64))]
	if k, err := rp.enc.Decode(d, src(rp.b64)); err == nil {
		out[n], n = d[:k], n+1
		buf = buf[k:]
	}
	if !rp.base32 {
		return out, n
	}
	b32 := rp.b32
	up := buf[:len(b32)]
	for i := 0; i < len(b32); i++ {
		if up[i] = b32[i]; up[i] >= 'a' {
			up[i] -= 'a' - 'A'
		}
	}
	d = buf[len(b32) : len(b32)+base32Raw.DecodedLen(len(b32))]
	if k, err := base32Raw.Decode(d, up); err == nil {
		out[n], n = d[:k], n+1
	}
	return out, n
}

// runParts is how decodings reads a run without line breaks: as hex
// when it is hex whole (and then only so); else b64 as base64 in enc,
// and when the run is base32's, b32 as base32.
type runParts struct {
	hex    bool
	b64    string
	enc    *base64.Encoding
	base32 bool
	b32    string
}

func runPartsOf(flat string) runParts {
	if len(flat)%2 == 0 && allOf(flat, rawjson.IsHex) {
		return runParts{hex: true}
	}
	body := strings.TrimRight(flat, "=")
	rp := runParts{b64: body, enc: base64.RawStdEncoding}
	if len(rp.b64)%4 == 1 {
		rp.b64 = rp.b64[:len(rp.b64)-1] // 4n+1 characters are not base64: drop one
	}
	if containsEither(rp.b64, '-', '_') {
		rp.enc = base64.RawURLEncoding
	}
	if allOf(body, isBase32) {
		rp.base32, rp.b32 = true, body
		if k := len(body) % 8; k == 1 || k == 3 || k == 6 {
			rp.b32 = body[:len(body)-1] // not a length base32 writes: drop one
		}
	}
	return rp
}

// containsEither is strings.ContainsAny of two bytes, without the set
// ContainsAny builds on every call.
func containsEither(s string, a, b byte) bool {
	return strings.IndexByte(s, a) >= 0 || strings.IndexByte(s, b) >= 0
}

// decodeRoom is the scratch decodings needs for a run of n bytes: the
// run without line breaks, its base64, the run upper-cased and its
// base32.
func decodeRoom(n int) int { return n + n*3/4 + n + n*5/8 + 8 }

// base32Raw is base32 without padding.
var base32Raw = base32.StdEncoding.WithPadding(base32.NoPadding)

func allOf(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// isBase32 reports whether c is a base32 digit, in either case.
func isBase32(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '2' && c <= '7'
}

// texty reports whether b reads as text: valid UTF-8, nearly all of it
// printable. A credential is text; most long runs of letters and digits
// (identifiers, digests, binary blobs) decode to noise.
func texty(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	return controls(b)*20 <= len(b)
}

// controls counts the bytes of b that are control characters other than
// line breaks and tabs: what texty allows one in twenty of.
func controls(b []byte) int {
	bad := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			bad++
		}
	}
	return bad
}

// mayStartText reports whether b may start a reading of n bytes that is
// texty: it holds no more controls than the whole may, and no UTF-8
// sequence in it is invalid (one cut at its end may be completed).
func mayStartText(b []byte, n int) bool {
	if controls(b)*20 > n {
		return false
	}
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			return !utf8.FullRune(b)
		}
		b = b[size:]
	}
	return true
}

// hiddenOwner is the owner of the index's needles that are characters a
// reading removes or narrows (see hiddenNeedles): the raw check decodes
// the string that holds one.
const hiddenOwner = 1 << 30

// nextPercent returns the offset of the first percent escape of s that
// starts in [i, end), or -1.
func nextPercent(s string, i, end int) int {
	for {
		j := strings.IndexByte(s[i:end], '%')
		if j < 0 {
			return -1
		}
		i += j
		if i+2 < len(s) && rawjson.IsHex(s[i+1]) && rawjson.IsHex(s[i+2]) {
			return i
		}
		i++
	}
}

// nextEntity returns the offset of the first HTML character reference
// of s that starts in [i, end), or -1.
func nextEntity(s string, i, end int) int {
	for {
		j := strings.IndexByte(s[i:end], '&')
		if j < 0 {
			return -1
		}
		i += j
		if _, n := entity(s[i:]); n > 0 {
			return i
		}
		i++
	}
}

// nextWideEscape returns the offset of the first escape of the raw JSON
// text s from i on that a reading decodes and the raw bytes do not show:
// a \u escape of a character beyond ASCII, or an escaped backslash
// that starts literal escape text (rawjson.EscapeText), that starts in
// [i, end); -1 when there is none.
func nextWideEscape(s string, i, end int) int {
	for i < end {
		j := strings.IndexByte(s[i:end], '\\')
		if j < 0 || i+j+1 >= len(s) {
			return -1
		}
		i += j
		switch s[i+1] {
		case 'u':
			if r, ok := rawjson.Hex4(s[i+2:]); ok && r >= utf8.RuneSelf {
				return i
			}
		case '\\':
			if i+2 < len(s) && rawjson.EscapeText(s[i+2]) {
				return i
			}
		}
		i += 2
	}
	return -1
}

// runByte marks the bytes of a run nextTextRun reads: base64's and its
// padding.
var runByte = func() (t [256]bool) {
	t = b64Byte
	t['='] = true
	return t
}()

// strongWord sets the high bit of each byte of a little-endian word in
// '0' to 'Z' (digits, capitals and :;<=>?@), which base64, hex and base32
// of text are full of and ordinary words are not. It is Bit Twiddling
// Hacks' hasbetween, exact: l*(127+n) - x&l*127 has a high bit where a
// byte is below n, x&l*127 + l*(127-m) where it is above m.
func strongWord(x uint64) uint64 {
	const l = 0x0101010101010101
	low := x & (l * 127)
	return (l*(127+'Z'+1) - low) & (low + l*(127-('0'-1))) & ^x & (l * 128)
}

// sepPairs sets the high bit of each byte p of a little-endian word that
// is ':', '-' or a space with another of them three bytes on: where a
// word inside a run of separated hex bytes (de:ad:be:ef) has a
// separator, a hex byte and the next separator.
func sepPairs(x uint64) uint64 {
	m := zeroBytes(x^(l8*':')) | zeroBytes(x^(l8*'-')) | zeroBytes(x^(l8*' '))
	return m & (m >> 24)
}

const l8 = 0x0101010101010101

// zeroBytes sets the high bit of each zero byte of x, exactly (no borrow
// from a lower byte: each byte's low seven bits are added apart).
func zeroBytes(x uint64) uint64 {
	return ^((x&(l8*127) + l8*127) | x) & (l8 * 128)
}

// allRunBytes reports whether the 8 bytes of w are all runByte.
func allRunBytes(w []byte) bool {
	w = w[:8:8]
	return runByte[w[0]] && runByte[w[1]] && runByte[w[2]] && runByte[w[3]] &&
		runByte[w[4]] && runByte[w[5]] && runByte[w[6]] && runByte[w[7]]
}

// nextTextRun returns an offset inside the first run of s from i on that
// may be base64, hex or base32 of text, and the run's bounds (wrapped
// lines included); -1 when there is none. It looks at every other
// aligned 8-byte word for a digit or a capital: a run of minEncodedRun
// bytes or more holds such a word whole, and when it encodes a
// credential, digits and capitals are all over it. Where the word is made of run
// bytes only (runByte) it reads the run around it, bounded as
// encodedRuns bounds it (at its padding), and returns it with whole true
// when its chain is a whole string (wholeString), else when its start
// may decode to text (textPrefix); where it has separators
// three bytes apart, the run of separated hex bytes around them. It looks at
// the words that start before end (a multiple of 8, or len(s)); a run
// found there may reach past it.
func nextTextRun(s string, i, end int) (at, lo, hi int, whole bool) {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	base := unsafe.Pointer(unsafe.StringData(s))
	word := func(at int) uint64 { return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, at))[:]) } // at+8 <= len(b)
	w := (i + 7) &^ 7
	for w+8 <= len(b) && w < end {
		if w+24 <= len(b) && strongWord(word(w))|strongWord(word(w+16)) == 0 {
			w += 32 // two sampled words at once: one branch
			continue
		}
		x := word(w)
		m := strongWord(x)
		if m == 0 {
			w += 16
			continue
		}
		if sep := sepPairs(x); sep != 0 {
			p := w + bits.TrailingZeros64(sep)/8 // p+3 < w+8
			if rawjson.IsHex(b[p+1]) && rawjson.IsHex(b[p+2]) {
				start := sepHexStart(s, p+1)
				if end := sepHexRun(s, start); end >= start+minEncodedRun {
					return p + 1, start, end, false
				}
			}
		}
		if !allRunBytes(b[w:]) {
			w += 16
			continue
		}
		k := w + bits.TrailingZeros64(m)/8
		lo, hi := k, k
		byteAt := func(i int) byte { return *(*byte)(unsafe.Add(base, i)) } // 0 <= i < len(b)
		for lo > 0 && b64Byte[byteAt(lo-1)] {
			lo--
		}
		if lo < k && lo > 0 && b[lo-1] == '\\' {
			lo++ // not the letter of a \n
		}
		for hi < len(b) && b64Byte[byteAt(hi)] {
			hi++
		}
		for n := 0; n < 6 && hi < len(b) && b[hi] == '='; n++ {
			hi++
		}
		if hi-lo >= minEncodedRun {
			clo, chi := runChain(s, k)
			if wholeString(s, clo, chi) {
				return k, clo, chi, true
			}
			if textPrefix(s[lo:hi], chi-clo) {
				return k, clo, chi, false
			}
		}
		w = max(w+16, (hi+7)&^7)
	}
	return -1, 0, 0, false
}

// wholeString reports whether the run [lo, hi) of a raw JSON text is a
// whole string, between two quotes that are not escaped: Find decodes
// such a run (a blob, a file read as base64) however its first bytes
// read, so a credential behind a binary header is found, and the raw
// check must decode it too.
func wholeString(s string, lo, hi int) bool {
	return lo > 0 && s[lo-1] == '"' && rawjson.EvenBackslashes(s, lo-1) && hi < len(s) && s[hi] == '"'
}

// textPrefix reports whether the start of a run may start a texty
// reading of n bytes (mayStartText) in one of the encodings decodings
// tries; n bounds the reading of the whole run (its length in the raw
// text will do): Find judges the whole reading, which may hold one
// control character in twenty anywhere, its first bytes included.
func textPrefix(run string, n int) bool {
	p := run[:min(len(run), 32)]
	p = p[:len(p)-len(p)%8]
	if !headMayBeText(p, n) {
		return false
	}
	var buf [128]byte
	dec, k := decodings(p, 0, buf[:])
	for _, d := range dec[:k] {
		if mayStartText(d, n) {
			return true
		}
	}
	return false
}

// headMayBeText reports whether some reading decodings makes of p (a run
// without line breaks; n bounds the whole run's reading) may be texty,
// judged by the bytes its first 8 bytes decode to (mayStartText): the
// decoding of a run that reads as
// noise from its start stops there.
func headMayBeText(p string, n int) bool {
	if len(p) < 8 {
		return true
	}
	src := func(t string) []byte { return unsafe.Slice(unsafe.StringData(t), len(t)) } // read only
	rp := runPartsOf(p)
	var head [8]byte
	if rp.hex {
		_, err := hex.Decode(head[:4], src(p[:8]))
		return err != nil || mayStartText(head[:4], n)
	}
	if len(rp.b64) < 8 {
		return true
	}
	if _, err := rp.enc.Decode(head[:6], src(rp.b64[:8])); err == nil && mayStartText(head[:6], n) {
		return true
	}
	if !rp.base32 {
		return false
	}
	if len(rp.b32) < 8 {
		return true
	}
	var up [8]byte
	for i := range up {
		if up[i] = rp.b32[i]; up[i] >= 'a' {
			up[i] -= 'a' - 'A'
		}
	}
	_, err := base32Raw.Decode(head[:5], up[:])
	return err == nil && mayStartText(head[:5], n)
}
