package rawjson

import (
	"strings"
	"testing"
)

// FuzzScanEscapes: ScanEscapes says ASCII exactly when EachASCIIEscape
// finds a string, and Slash exactly when a \/ follows an even number of
// backslashes.
func FuzzScanEscapes(f *testing.F) {
	for _, s := range []string{``, `"a\u0041"`, `"\\u0041"`, `"\\\u0041"`, `"\/"`, `"\\/"`, `"\\\/"`, `\u00`, `\u0080`, `\u007`, `x\`, `"\n\u003c\/"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := ScanEscapes([]byte(s))
		ascii := false
		EachASCIIEscape(s, func(lo, hi int) bool {
			ascii = true
			return false
		})
		slash := false
		for i := 0; ; i += 2 {
			j := strings.Index(s[i:], `\/`)
			if j < 0 {
				break
			}
			i += j
			if EvenBackslashes(s, i) {
				slash = true
				break
			}
		}
		if e.ASCII != ascii || e.Slash != slash {
			t.Fatalf("ScanEscapes(%q) = %+v, want ASCII %v, Slash %v", s, e, ascii, slash)
		}
	})
}
