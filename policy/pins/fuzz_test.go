package pins

import "testing"

// FuzzCanonical: any input either fails or yields a canonical text that is
// a fixed point (canonicalising it again changes nothing), so a lock file
// written from it reads back with the same digest.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{echoV1, echoV2, sumV1,
		`{"name":"x","description":"ok\u001b[8mhidden\u001b[28m \udb40\udc41 \u202eevil"}`,
		`{"a":{"b":[1,2.50,-0,1e400,"\ud83d\ude00"]},"_meta":{"x":1}}`,
		`{"a\u200b":1,"a":2}`, `{"n":12345678901234567890123}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Canonical(b)
		if err != nil {
			return
		}
		again, err := Canonical([]byte(d.Text()))
		if err != nil {
			t.Fatalf("canonical text does not parse: %v\n%s", err, d.Text())
		}
		if again.Text() != d.Text() {
			t.Fatalf("not a fixed point:\n%s\n%s", d.Text(), again.Text())
		}
	})
}
