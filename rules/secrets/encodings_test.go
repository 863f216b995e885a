package secrets

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// encoder is one way an agent or a server may write a credential.
type encoder struct {
	name string
	enc  func(string) string
}

func hexSep(s, sep string) string {
	h := hex.EncodeToString([]byte(s))
	var parts []string
	for i := 0; i < len(h); i += 2 {
		parts = append(parts, h[i:i+2])
	}
	return strings.Join(parts, sep)
}

// every applies f to each rune of s.
func every(s string, f func(r rune) string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(f(r))
	}
	return b.String()
}

// splitEvery puts sep inside s every n bytes (between ASCII bytes only).
func splitEvery(s, sep string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && i%n == 0 && s[i] < 0x80 && s[i-1] < 0x80 && s[i] != '\n' && s[i-1] != '\n' {
			b.WriteString(sep)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func wrap76(s string) string {
	var lines []string
	for len(s) > 76 {
		lines = append(lines, s[:76])
		s = s[76:]
	}
	return strings.Join(append(lines, s), "\n")
}

// encoders are the standard encodings of issue 24.
var encoders = []encoder{
	{"plain", func(s string) string { return s }},
	{"percent", url.QueryEscape},
	{"percent-all", allPercent},
	{"percent-4x", func(s string) string {
		return url.QueryEscape(url.QueryEscape(url.QueryEscape(allPercent(s))))
	}},
	{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64url", func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) }},
	{"base64-unpadded", func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }},
	{"base64-wrapped", func(s string) string { return wrap76(base64.StdEncoding.EncodeToString([]byte(s))) }},
	{"hex", func(s string) string { return hex.EncodeToString([]byte(s)) }},
	{"HEX", func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }},
	{"hex-colon", func(s string) string { return hexSep(s, ":") }},
	{"hex-space", func(s string) string { return strings.ToUpper(hexSep(s, " ")) }},
	{"hex-dash", func(s string) string { return hexSep(s, "-") }},
	{"hex-x", func(s string) string { return `\x` + hexSep(s, `\x`) }},
	{"base32", func(s string) string { return base32.StdEncoding.EncodeToString([]byte(s)) }},
	{"html-decimal", func(s string) string { return every(s, func(r rune) string { return fmt.Sprintf("&#%d;", r) }) }},
	{"html-hex", func(s string) string { return every(s, func(r rune) string { return fmt.Sprintf("&#x%x;", r) }) }},
	{"html-named", html.EscapeString},
	{"literal-u", func(s string) string { return every(s, func(r rune) string { return fmt.Sprintf(`\u%04x`, r) }) }},
	{"zero-width", func(s string) string { return splitEvery(s, "\u200b", 3) }},
	{"soft-hyphen", func(s string) string { return splitEvery(s, "\u00ad", 4) }},
	{"word-joiner", func(s string) string { return splitEvery(s, "\u2060", 2) }},
	{"fullwidth", func(s string) string {
		return every(s, func(r rune) string {
			if r > ' ' && r < 0x7f {
				return string(r - 0x21 + 0xff01)
			}
			return string(r)
		})
	}},
	{"base64-of-percent", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(s))) }},
	{"hex-of-base64", func(s string) string { return hex.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(s)))) }},
}

// credentialCorpus returns credentials of every family: gitleaks'
// formats, mcpguard's own, private keys of every size.
func credentialCorpus() []string {
	var out []string
	for _, c := range adversarialSecrets() {
		out = append(out, c[1])
	}
	return append(out, ownTrue()...)
}

// stopped reports whether the scanner stops text both ways: it refuses
// it as an argument, its raw JSON is not taken as clean, and redacting
// it leaves nothing to find.
func stopped(sc *Scanner, text string) (in, out bool) {
	in = sc.Check(text) != nil
	q, err := jsontext.AppendQuote(nil, text)
	if err != nil {
		panic(err)
	}
	red, _ := sc.Redact(text)
	out = !sc.RawClean(q) && red != text && sc.Check(red) == nil
	return in, out
}

// TestEncodedCorpus measures the share of credentials in the standard
// encodings stopped in each direction, and holds it at 95% or more.
func TestEncodedCorpus(t *testing.T) {
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	creds := credentialCorpus()
	total, in, out := 0, 0, 0
	perEnc := map[string][2]int{}
	var misses []string
	for _, e := range encoders {
		for _, c := range creds {
			for _, ctx := range []func(string) string{
				func(s string) string { return s },
				func(s string) string { return "note: " + s + " end" },
			} {
				text := ctx(e.enc(c))
				i, o := stopped(sc, text)
				total++
				n := perEnc[e.name]
				if i {
					in++
					n[0]++
				}
				if o {
					out++
					n[1]++
				}
				perEnc[e.name] = n
				if !i || !o {
					misses = append(misses, fmt.Sprintf("%s (in %v, out %v): %q", e.name, i, o, trunc(text)))
				}
			}
		}
	}
	names := make([]string, 0, len(perEnc))
	for n := range perEnc {
		names = append(names, n)
	}
	sort.Strings(names)
	per := 2 * len(creds)
	for _, n := range names {
		t.Logf("%-18s in %3d/%d out %3d/%d", n, perEnc[n][0], per, perEnc[n][1], per)
	}
	t.Logf("stopped: in %d/%d (%.1f%%), out %d/%d (%.1f%%)", in, total, 100*float64(in)/float64(total), out, total, 100*float64(out)/float64(total))
	if len(misses) > 0 && testing.Verbose() {
		for _, m := range misses {
			t.Log("miss: " + m)
		}
	}
	if in*100 < 95*total || out*100 < 95*total {
		t.Errorf("below 95%% both ways: in %d, out %d of %d", in, out, total)
	}
}

// TestRawCleanSeparatedHex: a credential written as hex bytes with any
// separator the pipeline reads, in either case, at every offset from
// the raw check's word grid, is not taken as clean. The word grid reads
// a dash-separated run as one run of base64 bytes, which decodes to
// noise; the separated bytes must still be found.
func TestRawCleanSeparatedHex(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	text := "token: ghp_" + strings.Repeat("Zq9", 12)
	for _, sep := range []string{":", "-", " "} {
		for _, h := range []string{hexSep(text, sep), strings.ToUpper(hexSep(text, sep))} {
			for pad := range 16 {
				s := strings.Repeat("y", pad) + "data " + h + " end"
				if len(sc.Find(s)) == 0 {
					t.Fatalf("Find misses %q", s)
				}
				if q, _ := jsontext.AppendQuote(nil, s); sc.RawClean(q) {
					t.Errorf("RawClean passes %q", s)
				}
			}
		}
	}
}

// TestRawCleanGluedRuns: a credential in base64 written right after a
// padded base64 run (which ends at its padding, as Find reads it) is not
// taken as clean, at every offset from the raw check's word grid.
func TestRawCleanGluedRuns(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cred := base64.StdEncoding.EncodeToString([]byte("token: ghp_" + strings.Repeat("Zq9", 12)))
	for _, pre := range []string{"QUJDRA==", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", "abcdefghijklmnopqrstuvwxyz0123456789="} {
		for pad := range 16 {
			s := strings.Repeat("y", pad) + " " + pre + cred + " end"
			if len(sc.Find(s)) == 0 {
				t.Fatalf("Find misses %q", s)
			}
			if q, _ := jsontext.AppendQuote(nil, s); sc.RawClean(q) {
				t.Errorf("RawClean passes %q", s)
			}
		}
	}
}

// TestKnownSecretForms: a known secret with a character beyond ASCII,
// sent the way Python's json writes it, and a UUID-shaped one upper-cased.
func TestKnownSecretForms(t *testing.T) {
	uuid := "3f2a9c1e-7b4d-4e8f-9a6b-2c1d0e9f8a7b"
	sc, err := New(Options{Known: []Known{{Source: "DB_PASSWORD", Value: "Grüße-aus-Köln-42"}, {Source: "API_TOKEN", Value: uuid}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{
		`{"q":"Gr\u00fc\u00dfe-aus-K\u00f6ln-42"}`,
		`{"q":"Gr\u00FC\u00DFe-aus-K\u00F6ln-42"}`,
		`{"q":"` + strings.ToUpper(uuid) + `"}`,
		`{"q":"` + strings.ReplaceAll(uuid, "-", "") + `"}`,
	} {
		if sc.RawClean([]byte(raw)) {
			t.Errorf("raw %s taken as clean", raw)
		}
		v := rawjsonString(t, raw)
		if f := sc.Check(v); f == nil {
			t.Errorf("%q not refused", v)
		}
		if red, _ := sc.Redact(v); red == v {
			t.Errorf("%q not redacted", v)
		}
	}
}

func rawjsonString(t *testing.T, raw string) string {
	dec := jsontext.NewDecoder(strings.NewReader(raw))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		if tok.Kind() == '"' && tok.String() != "q" {
			return tok.String()
		}
	}
}

// pemBlock is a private key block with n bytes of base64 body, wrapped
// at 64 columns.
func pemBlock(r *rand.Rand, kind string, n int) string {
	body := base64.StdEncoding.EncodeToString([]byte(rnd(r, alnum, n*3/4)))
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	if strings.HasPrefix(kind, "PGP") {
		b.WriteString("Version: GnuPG v2\nComment: rsa3072 with a subkey\n\n")
	}
	for len(body) > 64 {
		b.WriteString(body[:64] + "\n")
		body = body[64:]
	}
	b.WriteString(body + "\n")
	if strings.HasPrefix(kind, "PGP") {
		b.WriteString("=" + rnd(r, b64, 4) + "\n")
	}
	b.WriteString("-----END " + kind + "-----\n")
	return b.String()
}

// TestRawCleanNoisyBlob: a string that is one run of base64 or hex whole
// (a blob, image data, a file read as base64) is decoded whole by Find
// however its first bytes read, so a credential inside a binary file
// (behind a header that decodes to noise) is found; the raw check's
// finder, which skips runs whose first bytes decode to noise, must not
// pass it.
func TestRawCleanNoisyBlob(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	creds := adversarialSecrets()
	cred := "key " + creds[0][1] + "\ntoken " + creds[2][1] + "\n"
	for _, head := range [][]byte{{0, 0, 0, 0, 0, 0}, {0xff, 0xfe, 0, 1, 2, 3, 4, 5, 6}, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")} {
		for pad := range 6 {
			blob := append(append(append([]byte{}, head...), make([]byte, pad)...), cred...)
			for _, s := range []string{
				base64.StdEncoding.EncodeToString(blob),
				base64.RawURLEncoding.EncodeToString(blob),
				hex.EncodeToString(blob),
				strings.ToUpper(hex.EncodeToString(blob)),
				base32.StdEncoding.EncodeToString(blob),
			} {
				if len(sc.Find(s)) == 0 {
					t.Fatalf("Find misses %q", s)
				}
				q, _ := jsontext.AppendQuote(nil, s)
				if sc.RawClean(q) {
					t.Errorf("RawClean passes %q", q)
				}
				for n := 2; n <= 4; n++ {
					if sc.rawCleanParts(string(q), rawjson.ScanEscapes(q), n) {
						t.Errorf("RawClean in %d parts passes %q", n, q)
					}
				}
			}
		}
	}
}

// TestRawCleanNoisyHead: Find reads a run inside a text as text when its
// whole reading has one control character in twenty or fewer, its first
// bytes included; the raw check's finder, which judges a run by its
// first bytes, must not pass a credential behind a head of a few NULs
// (in prose, or glued to a padded run in a string of runs).
func TestRawCleanNoisyHead(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	creds := adversarialSecrets()
	body := "key " + creds[0][1] + "\ntoken " + creds[2][1] + "\n" + strings.Repeat("an ordinary line of the file\n", 4)
	for _, head := range []string{"\x00\x00\x00\x00\x00\x00", "\x00\x01\x02\x03\x04\x05\x06\x07", "\x7f\x7f\x7f"} {
		for _, enc := range []string{
			base64.StdEncoding.EncodeToString([]byte(head + body)),
			hex.EncodeToString([]byte(head + body)),
			base32.StdEncoding.EncodeToString([]byte(head + body)),
		} {
			for _, s := range []string{"file: " + enc + " end", "QUJDRA==" + enc} {
				if len(sc.Find(s)) == 0 {
					t.Fatalf("Find misses %q", s)
				}
				q, _ := jsontext.AppendQuote(nil, s)
				if sc.RawClean(q) {
					t.Errorf("RawClean passes %q", q)
				}
			}
		}
	}
}
