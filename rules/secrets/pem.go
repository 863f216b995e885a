package secrets

import (
	"regexp"
	"strings"
)

// A private key block (PEM: RSA, EC, OpenSSH, PKCS#8, encrypted; PGP
// secret key blocks) is found by reading it line by line, however long
// it is (an RSA 8192 key, a gpg key with subkeys), and also when only a
// part of it is there: BEGIN without END (what `head` returns) and END
// without BEGIN (`tail`). Line breaks may be real or written as \n
// (a key inside a JSON document read as text, a GCP service account
// file). A block needs minKeyBody bytes of base64 to count, so that
// documentation's "-----BEGIN PRIVATE KEY-----\n...\n" is not one.

const minKeyBody = 32

var (
	// A + for a space: the header of a key sent in a URL's query.
	keyBegin = regexp.MustCompile(`^(?i)-----BEGIN[ +A-Z0-9_-]{0,100}PRIVATE[ +]KEY(?:[ +]BLOCK)?-----`)
	keyEnd   = regexp.MustCompile(`^(?i)-----END[ +A-Z0-9_-]{0,100}PRIVATE[ +]KEY(?:[ +]BLOCK)?-----`)
)

// keyScans are the rules read by a scan rather than their regex.
var keyScans = map[string]func(s string, at int) (lo, hi int, ok bool){
	"private-key":      keyFrom,
	"private-key-tail": keyUntil,
}

// keyFrom reads a private key block whose BEGIN line starts at at, to
// its END line or to the last line that can be part of it.
func keyFrom(s string, at int) (int, int, bool) {
	m := keyBegin.FindStringIndex(s[at:min(len(s), at+160)])
	if m == nil {
		return 0, 0, false
	}
	pos, body := at+m[1], 0
	for {
		next := lineBreak(s, pos)
		if next == pos {
			break
		}
		line := next
		for line < len(s) && (s[line] == ' ' || s[line] == '\t') {
			line++
		}
		if e := keyEnd.FindStringIndex(s[line:min(len(s), line+160)]); e != nil {
			if body >= minKeyBody {
				return at, line + e[1], true
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
	e := keyEnd.FindStringIndex(s[at:min(len(s), at+160)])
	if e == nil {
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
	return pos, at + e[1], body >= minKeyBody
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
