package message

import "bytes"

// MaxDepth is the deepest nesting of arrays and objects a message may have.
// go-json-experiment accepts 10000 levels; peers written in other languages
// (recursive-descent parsers, schema validators) may overflow their stacks
// long before that, so a message deeper than this is refused before any
// decoder sees it.
const MaxDepth = 64

// shape is what one pass over a raw message learns before it is decoded.
type shape struct {
	depth      int  // deepest nesting seen, capped at MaxDepth+1
	whitespace bool // insignificant whitespace between tokens
}

// scanShape measures nesting depth and notes whitespace outside strings. It
// does not validate: the strict decoder does that afterwards. It stops as
// soon as the depth limit is broken, so hostile input costs at most one pass.
func scanShape(b []byte) shape {
	var s shape
	depth := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			i = skipString(b, i+1)
		case '[', '{':
			depth++
			if depth > s.depth {
				s.depth = depth
				if depth > MaxDepth {
					return s
				}
			}
		case ']', '}':
			depth--
		case ' ', '\t', '\r', '\n':
			s.whitespace = true
		}
	}
	return s
}

// skipString returns the index of the quote that closes the string whose
// body starts at i (len(b) if it is unterminated). Escapes hide quotes.
// It jumps with IndexByte, which is vectorised: results of many megabytes
// are mostly string bodies.
func skipString(b []byte, i int) int {
	q := bytes.IndexByte(b[i:], '"')
	if q < 0 {
		return len(b)
	}
	q += i
	for {
		bs := bytes.IndexByte(b[i:q], '\\')
		if bs < 0 {
			return q
		}
		i += bs + 2 // past the backslash and the escaped byte
		if i > q {
			// The escape hid the quote we found: find the next one.
			n := bytes.IndexByte(b[i:], '"')
			if n < 0 {
				return len(b)
			}
			q = i + n
		}
	}
}

// trimSpace cuts JSON whitespace from both ends of a line (bytes.Trim with
// a cutset builds a set on every call: this runs on every message).
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
