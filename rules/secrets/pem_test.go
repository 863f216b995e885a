package secrets

import (
	"math/rand/v2"
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
// folding into the long s and the Kelvin sign and BLOCK included.
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
	for range 3000 {
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
