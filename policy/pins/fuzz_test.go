package pins

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

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

// FuzzLockRoundTrip: a lock holding any string the server sends, as an
// item's name (the lock's key), a member name, a field, the instructions
// or serverInfo, writes and reads back to the same items and digests
// (U+00A0, U+2003 and U+3000 once made Marshal fail; a newline, a tab or
// "<<" in a name did).
func FuzzLockRoundTrip(f *testing.F) {
	for _, s := range []string{"a\u00a0", "\u00a0a", "a\u2003b", "\u3000", "x\u00a0\n", "caf\u00e9 \u00ab\u00a0oui\u00a0\u00bb", "\U0001F600", "'\"\\", "\t- |",
		"a\nb", "a\tb", "a\rb", "<<", "null", "~", "- x", "k: v", "#c", "&a", "*a", "!t", "\u2028", "\u0085", " lead", "1e3", "{a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(s, "\uFFFD") // the proxy pins canonical, valid text
		q, err := jsontext.AppendQuote(nil, s)
		if err != nil {
			t.Skip()
		}
		d, err := Canonical([]byte(`{"name":` + string(q) + `,"description":` + string(q) + `,"title":"x",` + string(q) + `:1}`))
		if err != nil {
			return // not an item the proxy would pin
		}
		key := d.String("name")
		l := NewLock()
		l.Items[Tool][key] = d
		l.Items[Resource][key] = d
		l.ServerInfo = &d
		l.HasInstructions, l.Instructions = true, s
		b, err := l.Marshal()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		back, err := ParseLock(b)
		if err != nil {
			t.Fatalf("%q: %v\n%s", s, err, b)
		}
		if back.Items[Tool][key].Digest() != d.Digest() || back.Items[Resource][key].Digest() != d.Digest() ||
			len(back.Items[Tool]) != 1 || back.ServerInfo.Digest() != d.Digest() || back.Instructions != s {
			t.Fatalf("%q changed on the round trip:\n%s", s, b)
		}
	})
}
