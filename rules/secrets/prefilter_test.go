package secrets

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// FuzzPrefilter: when a rule's prefilter (the confirm tail of a curl
// rule, the required word of the private-key rule) passes a text over,
// the rule's whole regex does not match it either.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{
		`curl -H "Authorization: Bearer abcdefgh12345678" https://x`,
		"curl https://x \\\n  -H 'X-Api-Key: 0123456789abcdef'",
		`curl -u "alice:s3cr3tpassw0rd" https://x`,
		"curl --user=bob:hunter2hunter2\n",
		"curl/8.5.0\ncurl -H \"Accept: application/json\" https://x",
		"-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIB", 20) + "\n-----END RSA PRIVATE KEY-----",
		"-----BEGIN PUBLIC KEY-----\n" + strings.Repeat("MIIB", 20) + "\n-----END PUBLIC KEY-----",
		"-----BEGIN \u212a PRIVATE \u212aEY-----\n" + strings.Repeat("A", 70) + "\n\u212aEY-----",
		"-----BEGIN " + strings.Repeat("\u212a", 99) + "PRIVATE KEY-----" + strings.Repeat("A", 70) + "KEY-----",
		"-----BEGIN " + strings.Repeat("\u017f", 100) + "PRIVATE KEY-----" + strings.Repeat("A", 70) + "KEY-----",
		"-----BEGIN " + strings.Repeat("x", 101) + "PRIVATE KEY-----" + strings.Repeat("A", 70) + "KEY-----",
		"-----BEGIN\nPRIVATE KEY-----" + strings.Repeat("A", 70) + "KEY-----",
	} {
		f.Add(s)
	}
	var checked []*rule
	for _, r := range allRules() {
		if r.tail != nil || r.require != nil {
			r.compiled()
			checked = append(checked, r)
		}
	}
	if len(checked) < 3 {
		f.Fatalf("%d rules with a prefilter, want 3", len(checked))
	}
	f.Fuzz(func(t *testing.T, s string) {
		folded := make([]byte, len(s))
		for i := range len(s) {
			folded[i] = lowerByte[s[i]]
		}
		lower := string(folded)
		for _, r := range checked {
			for _, kw := range r.keywords {
				for at := 0; ; at++ {
					k := strings.Index(lower[at:], kw)
					if k < 0 {
						break
					}
					at += k
					w := s[at:min(len(s), at+2048)]
					if r.anchored.MatchString(w) {
						if r.tail != nil && !r.tailMatches(w) {
							t.Fatalf("%s: tail passes over a match in %q", r.spec.id, w)
						}
						if r.require != nil && !hasWordNear(w, 0, len(kw), *r.require) {
							t.Fatalf("%s: required word passes over a match in %q", r.spec.id, w)
						}
					}
				}
			}
		}
	})
}

// FuzzIndexScan: the index's scans (by hashes of a start's first bytes,
// by pairs) find every needle occurrence a naive search finds, in order.
func FuzzIndexScan(f *testing.F) {
	for _, s := range []string{"q~", "xq~", "a.eyJ", "xsk", "ghp_Ab1Ab1", "-----BEGIN", "x-----BEGIN", "curl", "xcurl", "sk",
		"abcdefsk", "abcdesk_", "abcdefgs.", "\u00fcsk curl", "ab\u00adcd sk", "Ghp_ghP_", "xxxxxx\u00fccurl"} {
		f.Add(s)
	}
	sc, err := New(Options{Known: []Known{{Source: "T", Value: "ghp_" + strings.Repeat("Ab1", 12)}, {Source: "P", Value: "correct horse battery staple"}}})
	if err != nil {
		f.Fatal(err)
	}
	ix := sc.idx
	scans := map[string]func(s string, from, to int, hit func(n *needle, at int) bool){
		"scanRange": ix.scanRange, "scanStarts": ix.scanStarts, "scanPairs": ix.scanPairs,
	}
	f.Fuzz(func(t *testing.T, s string) {
		type occ struct{ k, at int }
		var want []occ
		for at := 0; at+1 < len(s); at++ {
			for k := range ix.needles {
				n := &ix.needles[k]
				if len(s)-at < len(n.text) {
					continue
				}
				cand := s[at : at+len(n.text)]
				if n.fold && equalFoldLower(cand, n.text) || !n.fold && cand == n.text {
					want = append(want, occ{int(n.owner), at})
				}
			}
		}
		for name, scan := range scans {
			var got []occ
			scan(s, 0, len(s), func(n *needle, at int) bool {
				got = append(got, occ{int(n.owner), at})
				return true
			})
			if len(got) != len(want) {
				t.Fatalf("%s found %v, naive search %v", name, got, want)
			}
			for i := range got {
				if got[i].at != want[i].at {
					t.Fatalf("%s found %v, naive search %v", name, got, want)
				}
			}
			// Split anywhere, the ranges find the same, in the same order.
			for _, cut := range []int{1, 2, 3, len(s) / 3, len(s) / 2, len(s) - 1} {
				if cut <= 0 || cut >= len(s) {
					continue
				}
				var parts []occ
				for _, r := range [][2]int{{0, cut}, {cut, len(s)}} {
					scan(s, r[0], r[1], func(n *needle, at int) bool {
						if at < r[0] || at >= r[1] {
							t.Fatalf("%s(%d, %d) of %q reported %d", name, r[0], r[1], s, at)
						}
						parts = append(parts, occ{int(n.owner), at})
						return true
					})
				}
				if !slices.Equal(parts, got) {
					t.Fatalf("%s split at %d, the ranges found %v, the whole scan %v", name, cut, parts, got)
				}
			}
		}
	})
}

// TestLower8: the word-wide lower-casing the index compares with is
// lowerByte on every byte value in every position, next to any other.
func TestLower8(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			for _, other := range []byte{0, 'A', 'Z', '@', '[', 0x7f, 0x80, 0xc1, 0xda, 0xff} {
				var b, want [8]byte
				for i := range b {
					b[i] = other
				}
				b[pos] = byte(c)
				for i := range b {
					want[i] = lowerByte[b[i]]
				}
				got := lower8(binary.LittleEndian.Uint64(b[:]))
				if got != binary.LittleEndian.Uint64(want[:]) {
					t.Fatalf("lower8(%q) = %#x, want %q", b, got, want)
				}
			}
		}
	}
}
