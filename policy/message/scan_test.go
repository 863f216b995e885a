package message

import "testing"

// naiveShape is the obvious byte-at-a-time version of scanShape.
func naiveShape(b []byte) shape {
	var s shape
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
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

func FuzzScanShape(f *testing.F) {
	for _, s := range []string{`{"a":"x\"y[","b":[[{}]]}`, `"\\"[`, `"\`, `{"k":"\\\\"}[ `, `["a\"]"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanShape(b), naiveShape(b); got != want {
			t.Fatalf("scanShape(%q) = %+v, want %+v", b, got, want)
		}
	})
}
