package secrets

import (
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The armour lines keyBegin and keyEnd read, as the regexes they stand for.
var (
	keyBeginRe = regexp.MustCompile(`^(?i)-----BEGIN[ +A-Z0-9_-]{0,100}PRIVATE[ +]KEY(?:[ +]BLOCK)?-----`)
	keyEndRe   = regexp.MustCompile(`^(?i)-----END[ +A-Z0-9_-]{0,100}PRIVATE[ +]KEY(?:[ +]BLOCK)?-----`)
)

// armourPieces are what hostile and ordinary armour lines are made of:
// the words in every case, the separators, the characters (?i) folds
// into the header's class (long s, Kelvin sign) and bytes outside it.
var armourPieces = []string{"-----", "-", "BEGIN", "begin", "END", "eNd", "PRIVATE", "private", "PRIVATE KEY-----", " ", "+",
	"KEY", "key", "\u212aEY", "BLOCK", "BLOC\u212a", "RSA ", "OPENSSH ", "PGP ", "EC", "ſ", "\u212a", "x", "9", "_", "\n", ".", "é",
	"-----BEGIN ", "-----END ", "-----BEGIN RSA PRIVATE KEY-----", "PRIVATE+KEY+BLOCK-----", strings.Repeat("A", 40)}

func randomArmour(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(40) {
		b.WriteString(armourPieces[r.IntN(len(armourPieces))])
	}
	return b.String()
}

// checkArmour fails unless keyBegin and keyEnd end where their regexes
// do on s, from every offset.
func checkArmour(t *testing.T, s string) {
	t.Helper()
	for i := range len(s) {
		for _, c := range []struct {
			re *regexp.Regexp
			fn func(string, int) int
		}{{keyBeginRe, keyBegin}, {keyEndRe, keyEnd}} {
			want := -1
			if m := c.re.FindStringIndex(s[i:]); m != nil {
				want = i + m[1]
			}
			if got := c.fn(s, i); got != want {
				t.Fatalf("%q at %d: armour line ends at %d, the regex %v at %d", s, i, got, c.re, want)
			}
		}
	}
}

// TestKeyArmourIsTheRegex: the hand-read armour lines are the regex's,
// greedy choice of the last PRIVATE KEY within 100 characters, case
// folding into the long s and the Kelvin sign and BLOCK included. The
// race detector adds nothing to this one-goroutine check and slows it
// tenfold: under it, the first 1,000 of the 3,000 random armours are
// read (CI reads all without it).
func TestKeyArmourIsTheRegex(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"-----BEGIN PRIVATE KEY-----", "-----begin rsa private key-----\nMII", "-----BEGIN PGP PRIVATE KEY BLOCK-----",
		"-----BEGIN+PRIVATE+KEY-----", "-----END PRIVATE \u212aEY-----", "-----BEGIN ſ PRIVATE KEY BLOC\u212a-----",
		"-----BEGIN PRIVATE KEY----- PRIVATE KEY-----", "-----BEGIN PRIVATE KEY BLOCK-----PRIVATE KEY-----",
		"-----BEGIN " + strings.Repeat("A", 100) + "PRIVATE KEY-----", "-----BEGIN " + strings.Repeat("A", 99) + "PRIVATE KEY-----",
		"-----BEGIN " + strings.Repeat("\u212a", 99) + "PRIVATE KEY-----", "-----BEGIN " + strings.Repeat("ſ", 101) + "PRIVATE KEY-----",
		"-----BEGIN PRIVATE KEY BLOCK", "-----BEGIN PRIVATE KEY BLOCK----", "-----BEGIN PRIVATE KEY", "-----BEGIN PUBLIC KEY-----",
		strings.Repeat("-----BEGIN ", 30) + "PRIVATE KEY-----", "-----BEGINPRIVATE KEY-----", "-----BEGIN PRIVATE  KEY-----",
	} {
		checkArmour(t, s)
	}
	r := rand.New(rand.NewPCG(7, 8))
	n := 3000
	if raceEnabled {
		n = 1000
	}
	for range n {
		checkArmour(t, randomArmour(r))
	}
}

func FuzzKeyArmour(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		f.Add(randomArmour(r))
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1024 {
			return
		}
		checkArmour(t, s)
	})
}

// keyBlock is a private key block of kind with n bytes of random base64
// body wrapped at 64 columns (an RSA 8192 key is some 6300), and its
// first body line.
func keyBlock(r *rand.Rand, kind string, n int) (block, first string) {
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	b.WriteString("-----BEGIN " + kind + "-----\n")
	for n > 0 {
		line := make([]byte, min(64, n))
		for i := range line {
			line[i] = b64[r.IntN(64)]
		}
		if first == "" {
			first = string(line)
		}
		b.Write(line)
		b.WriteByte('\n')
		n -= len(line)
	}
	b.WriteString("-----END " + kind + "-----\n")
	return b.String(), first
}

// TestKeyInQuery: a key percent-encoded as a URL's query is (once to 4
// times: -----BEGIN%25252BRSA%25252BPRIVATE...) decodes to a header with
// + for its spaces, which the key scan reads and the rule's regex does
// not: a quick test derived from the regex passed over every such key,
// and an RSA 8192 key file read or written so reached its reader.
func TestKeyInQuery(t *testing.T) {
	t.Parallel()
	sc, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(24, 24))
	for _, kind := range []string{"RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "PGP PRIVATE KEY BLOCK"} {
		for _, n := range []int{100, 1700, 6300, 12000} {
			key, first := keyBlock(r, kind, n)
			enc := key
			for times := 1; times <= 4; times++ {
				enc = url.QueryEscape(enc)
				red, fs := sc.Redact(enc)
				if len(fs) == 0 || strings.Contains(red, first) || strings.Contains(red, url.QueryEscape(first)) {
					t.Errorf("%s of %d bytes, query-escaped %d times: findings %v", kind, n, times, fs)
				}
				if sc.Check(enc) == nil {
					t.Errorf("%s of %d bytes, query-escaped %d times: Check passes it", kind, n, times)
				}
				if sc.RawClean([]byte(`{"content":"` + enc + `"}`)) {
					t.Errorf("%s of %d bytes, query-escaped %d times: RawClean passes it", kind, n, times)
				}
			}
		}
	}
}
