package message

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
			// Skip the string body; escapes hide quotes and brackets.
			for i++; i < len(b); i++ {
				if b[i] == '\\' {
					i++
				} else if b[i] == '"' {
					break
				}
			}
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
