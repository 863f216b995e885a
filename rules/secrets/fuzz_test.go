package secrets

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/cputime"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

const fuzzKnown = "fuzz-Kn0wn-S3cret"

// FuzzRedact: Redact never panics, is idempotent, and its output never
// holds the known secret (in any encoding the scanner knows) or a
// credential it finds.
func FuzzRedact(f *testing.F) {
	for _, c := range adversarialSecrets() {
		f.Add(c[1])
		f.Add("x " + c[1] + "\n" + c[1][:len(c[1])/2])
	}
	for _, s := range []string{fuzzKnown, "a" + fuzzKnown + "b", hex.EncodeToString([]byte(fuzzKnown)),
		base64.StdEncoding.EncodeToString([]byte("xy" + fuzzKnown)), url.QueryEscape(fuzzKnown), "%2566uzz-Kn0wn-S3cret",
		"", "%", "%%", "+%2", "[REDACTED:github-pat]", "ghp_", ".ey.ey", "-----BEGIN PRIVATE KEY-----", "curl -u a:b"} {
		f.Add(s)
	}
	addEncodedSeeds(f)
	sc, err := New(Options{Known: []Known{{Source: "K", Value: fuzzKnown}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := sc.Redact(s)
		if again, _ := sc.Redact(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if fs := sc.Find(out); len(fs) > 0 {
			t.Fatalf("redacted output still has %v: %q", fs, out)
		}
		if strings.Contains(out, fuzzKnown) {
			t.Fatalf("the known secret survived: %q", out)
		}
	})
}

// FuzzRawClean: RawClean is sound: when it says a JSON string is clean,
// decoding it finds nothing.
func FuzzRawClean(f *testing.F) {
	for _, c := range adversarialSecrets() {
		f.Add(c[1])
	}
	f.Add(fuzzKnown)
	f.Add("line one\nghp_" + strings.Repeat("a1B", 12) + "\nend")
	f.Add("\nsk_live_" + strings.Repeat("x9", 12))
	addEncodedSeeds(f)
	sc, err := New(Options{Known: []Known{{Source: "K", Value: fuzzKnown}}})
	if err != nil {
		f.Fatal(err)
	}
	// passes reports whether RawClean passes q whole or split into parts
	// read at once, as a long text is.
	passes := func(q []byte) bool {
		clean := sc.RawClean(q)
		for n := 2; n <= 4; n++ {
			clean = clean || sc.rawCleanParts(string(q), rawjson.ScanEscapes(q), n)
		}
		return clean
	}
	f.Fuzz(func(t *testing.T, s string) {
		{
			q, err := jsontext.AppendQuote(nil, s)
			if err != nil {
				return // not valid UTF-8: the strict parser refuses the message
			}
			if passes(q) && len(sc.Find(s)) > 0 {
				t.Fatalf("RawClean passed %q, which holds %v", q, sc.Find(s))
			}
			// The same text with every ASCII letter written as \u00XX.
			var esc strings.Builder
			esc.WriteByte('"')
			body := q[1 : len(q)-1]
			for i := 0; i < len(body); i++ {
				c := body[i]
				switch {
				case c == '\\': // an escape: copied whole
					n := 2
					if i+1 < len(body) && body[i+1] == 'u' {
						n = 6
					}
					esc.Write(body[i:min(len(body), i+n)])
					i += n - 1
				case c >= 'a' && c <= 'z':
					esc.WriteString(`\u00` + hex.EncodeToString([]byte{c}))
				default:
					esc.WriteByte(c)
				}
			}
			esc.WriteByte('"')
			if passes([]byte(esc.String())) && len(sc.Find(s)) > 0 {
				t.Fatalf("RawClean passed the escaped form of %q", s)
			}
		}
	})
}

// TestDenseKeywordsStayLinear: text dense with one rule's keyword costs
// CPU time linear in its length (half a megabyte costs about four times a quarter
// of it), not a regex run over the text per keyword.
func TestDenseKeywordsStayLinear(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	// cost is the best of runs scans of text, in the process's CPU time
	// (a long raw check runs in parts on several goroutines; the test is
	// not parallel): a shared machine's waits for a core are not the
	// scan's.
	cost := func(text string, runs int) time.Duration {
		return cputime.BestProcess(runs, func() {
			sc.Find(text)
			q, _ := jsontext.AppendQuote(nil, text)
			sc.RawClean(q)
		})
	}
	size := 512 << 10
	if raceEnabled {
		size = 64 << 10
	}
	for _, unit := range []string{"-----BEGIN PRIVATE KEY-----\n", "sk_live_", "ghp_", "curl -u a:b ", "eyJhbGciOi.eyJ", "s.abcdefghijklmnopqrstuvwx ",
		"-----END PRIVATE KEY-----\n", "MIIEow\n", "%41", "%25", "&#65;", `\u0041`, "\u200b", "\u00ad", "\uff21", "QUtJQUxINFZQTTc3TDZT",
		"password=", "token: ", "x://a:b@", "Authorization: Bearer ", "de:ad:", "4142434445464748"} {
		n := size / len(unit)
		// The small text, whose cost sets the bound, gets the best of
		// three; the large one a single run (a shared core only makes it
		// slower), and on failure the best of three: a quadratic scan is
		// slow in every run.
		small, big := cost(strings.Repeat(unit, n/4), 3), cost(strings.Repeat(unit, n), 1)
		if big > 10*small+50*time.Millisecond {
			small, big = cost(strings.Repeat(unit, n/4), 3), cost(strings.Repeat(unit, n), 3)
		}
		t.Logf("%q: x %d %v, x %d %v", unit, n/4, small, n, big)
		if big > 10*small+50*time.Millisecond {
			t.Errorf("%q: 4x the text took %v, %v for a quarter: not linear", unit, big, small)
		}
	}
}

// addEncodedSeeds adds every credential of the corpus in every standard
// encoding, and the known secret in each.
func addEncodedSeeds(f *testing.F) {
	for _, e := range encoders {
		for _, c := range adversarialSecrets()[:8] {
			f.Add(e.enc(c[1]))
		}
		f.Add(e.enc(fuzzKnown))
		f.Add("see " + e.enc("postgres://app:pw@db/prod") + " there")
	}
}

// TestDenseRegionNotWhole: past the search budget, what is redacted is the
// region around each keyword that could not be searched, never the whole
// text; a credential in the dense part is still covered whole, and a file
// list dense with a rule's keyword is not redacted at all.
func TestDenseRegionNotWhole(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	const clean = "This paragraph is ordinary prose about the build.\n"
	key := "sk_live_" + strings.Repeat("4eC39HqLyjWDarjtT1zdp7dc", 2)
	dense := strings.Repeat("sk_live_ abcdefghijklmnopqrstuvwxyz0123 x\n", 4000)
	text := clean + dense + "key " + key + "\n" + dense + clean
	fs := sc.Find(text)
	if len(fs) == 0 {
		t.Fatal("nothing found in a dense hostile text")
	}
	red, _ := sc.Redact(text)
	if !strings.HasPrefix(red, clean) || !strings.HasSuffix(red, clean) {
		t.Errorf("the clean text around a dense region was redacted: %.80q ... %.80q", red, red[max(0, len(red)-80):])
	}
	if strings.Contains(red, key) || strings.Contains(red, key[8:30]) {
		t.Error("a credential inside the dense region was left")
	}
	for _, f := range fs {
		if f.Start == 0 && f.End == len(text) {
			t.Error("the whole text was redacted")
		}
	}
	var list strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&list, " libs/math/test/test_case_%d.cpp\n", i)
	}
	if fs := sc.Find(list.String()); len(fs) > 0 {
		t.Errorf("a file list full of test_ paths: %d findings, first %+v", len(fs), fs[0])
	}
}
