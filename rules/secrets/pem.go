package secrets

import "strings"

// A private key block (PEM: RSA, EC, OpenSSH, PKCS#8, encrypted; PGP
// secret key blocks) is found by reading it line by line, however long
// it is (an RSA 8192 key, a gpg key with subkeys), and also when only a
// part of it is there: BEGIN without END (what `head` returns) and END
// without BEGIN (`tail`). Line breaks may be real or written as \n
// (a key inside a JSON document read as text, a GCP service account
// file). A block needs minKeyBody bytes of base64 to count, so that
// documentation's "-----BEGIN PRIVATE KEY-----\n...\n" is not one.

const minKeyBody = 32

// keyBegin and keyEnd return the end of the armour line of a private
// key block that starts at i (-1 when there is none): what the regex
// ^(?i)-----BEGIN[ +A-Z0-9_-]{0,100}PRIVATE[ +]KEY(?:[ +]BLOCK)?----- (a
// + for a space: the header of a key sent in a URL's query), or its END
// form, matches there. They read at most the 100 characters of the
// header and test where its suffix starts, no regex run: a text made of
// "-----BEGIN " thousands of times costs a short loop per keyword.
func keyBegin(s string, i int) int { return keyArmour(s, i, "begin") }
func keyEnd(s string, i int) int   { return keyArmour(s, i, "end") }

// keyArmour is keyBegin for word "begin" and keyEnd for "end". As the
// regex's greedy {0,100} does, it takes the last place within the
// header's characters where the suffix matches, and a BLOCK suffix over
// a plain one. Every suffix starts with a P: without one near, the
// header is not read at all.
func keyArmour(s string, i int, word string) int {
	p := i + 5 + len(word)
	if p > len(s) || s[i:i+5] != "-----" || !equalFoldLower(s[i+5:p], word) {
		return -1
	}
	near := s[p:min(len(s), p+maxHeaderBytes)]
	if strings.IndexByte(near, 'P') < 0 && strings.IndexByte(near, 'p') < 0 {
		return -1
	}
	q := p
	for n := 0; n < 100 && q < len(s); n++ {
		w := 1
		if !armourByte[s[q]] {
			if w = armourChar(s, q); w == 0 {
				break
			}
		}
		q += w
	}
	for j := min(q, len(s)-1); j >= p; j-- {
		if s[j]|0x20 == 'p' {
			if e := keySuffix(s, j); e >= 0 {
				return e
			}
		}
	}
	return -1
}

// maxHeaderBytes bounds the bytes of a header's 100 characters (a
// Kelvin sign is 3).
const maxHeaderBytes = 3*100 + 1

// keySuffix returns the end of PRIVATE[ +]KEY(?:[ +]BLOCK)?----- at p,
// case-insensitively, or -1.
func keySuffix(s string, p int) int {
	if p+len("private key-----") > len(s) || s[p]|0x20 != 'p' || !equalFoldLower(s[p:p+7], "private") ||
		s[p+7] != ' ' && s[p+7] != '+' {
		return -1
	}
	p += 8
	k := foldK(s, p)
	if k == 0 || p+k+2 > len(s) || !equalFoldLower(s[p+k:p+k+2], "ey") {
		return -1
	}
	p += k + 2
	if p+len(" bloc") < len(s) && (s[p] == ' ' || s[p] == '+') && equalFoldLower(s[p+1:p+5], "bloc") {
		if k := foldK(s, p+5); k > 0 && strings.HasPrefix(s[p+5+k:], "-----") {
			return p + 5 + k + 5
		}
	}
	if strings.HasPrefix(s[p:], "-----") {
		return p + 5
	}
	return -1
}

// foldK returns the length of a K at p that (?i) matches: k, K or the
// Kelvin sign; 0 when there is none.
func foldK(s string, p int) int {
	switch {
	case p < len(s) && s[p]|0x20 == 'k':
		return 1
	case strings.HasPrefix(s[p:], "\u212a"):
		return len("\u212a")
	}
	return 0
}

// armourChar returns the length of the character at p if it is one of
// the header's [ +A-Z0-9_-] under (?i), which holds the long s and the
// Kelvin sign; else 0.
func armourChar(s string, p int) int {
	if p >= len(s) {
		return 0
	}
	if armourByte[s[p]] {
		return 1
	}
	return foldLetter(s, p)
}

// foldLetter returns the length of the long s or the Kelvin sign at p,
// the letters beyond ASCII that (?i) folds into [A-Za-z]; else 0.
func foldLetter(s string, p int) int {
	for _, r := range [...]string{"\u017f", "\u212a"} {
		if strings.HasPrefix(s[p:], r) {
			return len(r)
		}
	}
	return 0
}

var armourByte = asciiClass(" +_-", "az", "09")

// keyScans are the rules read by a scan rather than their regex.
var keyScans = map[string]func(s string, at int) (lo, hi int, ok bool){
	"private-key":      keyFrom,
	"private-key-tail": keyUntil,
}

// keyFrom reads a private key block whose BEGIN line starts at at, to
// its END line or to the last line that can be part of it.
func keyFrom(s string, at int) (int, int, bool) {
	hdr := keyBegin(s, at)
	if hdr < 0 {
		return 0, 0, false
	}
	pos, body := hdr, 0
	for {
		next := lineBreak(s, pos)
		if next == pos {
			break
		}
		line := next
		for line < len(s) && (s[line] == ' ' || s[line] == '\t') {
			line++
		}
		if e := keyEnd(s, line); e >= 0 {
			if body >= minKeyBody {
				return at, e, true
			}
			return 0, 0, false
		}
		n := bodyLine(s, line)
		if n == 0 {
			n = keyHeader(s, line)
		} else {
			body += n
		}
		if n == 0 && line == next {
			pos = next // an empty line
			continue
		}
		if n == 0 {
			break
		}
		pos = line + n
	}
	return at, pos, body >= minKeyBody
}

// keyUntil reads the part of a private key block that ends with the END
// line at at and whose BEGIN line is not there.
func keyUntil(s string, at int) (int, int, bool) {
	e := keyEnd(s, at)
	if e < 0 {
		return 0, 0, false
	}
	pos, body := at, 0
	for {
		for pos > 0 && (s[pos-1] == ' ' || s[pos-1] == '\t') {
			pos--
		}
		prev := lineBreakBefore(s, pos)
		if prev == pos {
			break
		}
		start := prev
		for start > 0 && (bodyByte[s[start-1]] || s[start-1] == ' ' || s[start-1] == '\t') &&
			!(start >= 2 && s[start-2] == '\\') { // not the n of a \n
			start--
		}
		if start == prev {
			if strings.Contains(s[max(0, prev-160):prev], "-----BEGIN") {
				return 0, 0, false // the BEGIN rule reads this block
			}
			break
		}
		body += prev - start
		pos = start
	}
	return pos, e, body >= minKeyBody
}

// bodyByte marks the bytes of a base64 line of a key block.
var bodyByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isWordByte(byte(c)) && c != '_' || c == '+' || c == '/' || c == '='
	}
	return t
}()

// bodyLine returns the length of the base64 line at i (0: none).
func bodyLine(s string, i int) int {
	j := i
	for j < len(s) && (bodyByte[s[j]] || s[j] == '\\' && j+1 < len(s) && s[j+1] == '/') {
		j++
	}
	if j == i {
		return 0
	}
	k := j
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k < len(s) && lineBreak(s, k) == k && s[k] != '"' && !strings.HasPrefix(s[k:], `\"`) {
		return 0 // the line goes on with something else (a quote, raw or escaped, ends a JSON string)
	}
	return j - i
}

// keyHeader returns the length of a header line (Proc-Type: ...,
// Version: ...) at i, 0 when there is none.
func keyHeader(s string, i int) int {
	j := i
	for j < len(s) && j-i < 40 && (s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] == '-') {
		j++
	}
	if j == i || j+1 >= len(s) || s[j] != ':' || s[j+1] != ' ' {
		return 0
	}
	for j < len(s) && j-i < 256 && lineBreak(s, j) == j {
		j++
	}
	return j - i
}

// lineBreak returns where the line breaks at i end (i when there is
// none): CR, LF, or their escapes \r, \n (with any backslashes before).
func lineBreak(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == '\n' || c == '\r':
			i++
			continue
		case c == '\\':
			j := i
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if j < len(s) && (s[j] == 'n' || s[j] == 'r') {
				i = j + 1
				continue
			}
		}
		break
	}
	return i
}

// lineBreakBefore returns where the line breaks that end at i start (i
// when there is none).
func lineBreakBefore(s string, i int) int {
	for i > 0 {
		switch c := s[i-1]; {
		case (c == 'n' || c == 'r') && i >= 2 && s[i-2] == '\\':
			i -= 2
			for i > 0 && s[i-1] == '\\' {
				i--
			}
			continue
		case c == '\n' || c == '\r':
			i--
			continue
		}
		break
	}
	return i
}
