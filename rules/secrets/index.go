package secrets

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// lowerByte maps ASCII letters to lower case and every other byte to itself.
var lowerByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// needle is one string the index looks for: a rule's keyword (owner is
// the rule) or a known secret in one of its encodings (owner is -1-k for
// known secret k). fold: match ASCII case-insensitively (keywords, hex).
type needle struct {
	text  string // lower-cased when fold
	fold  bool
	owner int
}

// index finds every needle in a text in one pass: a bit per lower-cased
// byte pair says whether some needle starts with that pair, and only there
// are the needles compared.
type index struct {
	// pairs has a bit for every byte pair, as written (every case of a
	// folded needle's letters), that starts a needle.
	pairs [1 << 16 / 64]uint64
	// skip marks every byte pair that is a needle's first or
	// second pair, and for a two-byte needle every pair its second byte
	// starts: a needle starts at j or j-1 only where the pair at an even
	// j is marked, so scan reads every other pair. Its pairs are
	// little-endian (the first byte low), as a word loaded from the text
	// holds them. A byte a pair (1 or 0), not a bit: the scan's four
	// lookups a word are a load each.
	skip *[1 << 16]byte
	// tri has a bit for triHash of the first three bytes of every needle
	// (of a two-byte needle followed by any byte).
	tri [1 << 16 / 64]uint64
	// slot maps a lower-cased pair to 1 + its position in lists, which
	// holds one head for each distinct needle text that starts with the
	// pair (several rules share a keyword).
	slot    *[1 << 16]uint16
	lists   [][]head
	needles []needle
	// same chains the needles of one text: the index of the next, or -1.
	same []int32
}

// head is a distinct needle text in a list: word holds its first bytes
// (at most 8, little-endian, lower-cased when fold), mask covers them,
// k is its first needle, fold is its needle's. One masked compare of a
// word loaded from the text rejects almost every other needle of the
// pair without reading the needle.
type head struct {
	word, mask uint64
	k          int32
	fold       bool
}

func pairOf(a, b byte) uint16 { return uint16(lowerByte[a])<<8 | uint16(lowerByte[b]) }

func caseVariants(c byte, fold bool) []byte {
	if fold && c >= 'a' && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

func newIndex(needles []needle) *index {
	ix := &index{slot: new([1 << 16]uint16), skip: new([1 << 16]byte), needles: needles, same: make([]int32, len(needles))}
	last := map[needle]int32{} // the last needle of each text, owner 0
	for i, n := range needles {
		ix.same[i] = -1
		if len(n.text) < 2 {
			panic("secrets: needle shorter than two bytes")
		}
		for _, a := range caseVariants(n.text[0], n.fold) {
			for _, b := range caseVariants(n.text[1], n.fold) {
				p := uint16(a)<<8 | uint16(b)
				ix.pairs[p>>6] |= 1 << (p & 63)
				ix.setSkip(a, b)
			}
		}
		for _, b := range caseVariants(n.text[1], n.fold) {
			if len(n.text) == 2 {
				for c := range 256 {
					ix.setSkip(b, byte(c))
				}
				continue
			}
			for _, c := range caseVariants(n.text[2], n.fold) {
				ix.setSkip(b, c)
			}
		}
		p := pairOf(n.text[0], n.text[1])
		for c := range 256 {
			if len(n.text) > 2 {
				c = int(n.text[2])
			}
			h := triHash(n.text[0], n.text[1], byte(c))
			ix.tri[h>>6] |= 1 << (h & 63)
			if len(n.text) > 2 {
				break
			}
		}
		text := needle{text: n.text, fold: n.fold}
		if j, ok := last[text]; ok {
			ix.same[j], last[text] = int32(i), int32(i)
			continue
		}
		last[text] = int32(i)
		k := int(ix.slot[p])
		if k == 0 {
			ix.lists = append(ix.lists, nil)
			k = len(ix.lists)
			ix.slot[p] = uint16(k)
		}
		word, mask := wordAt(n.text, 0)
		if len(n.text) < 8 {
			mask = 1<<(8*len(n.text)) - 1
		}
		ix.lists[k-1] = append(ix.lists[k-1], head{word: word & mask, mask: mask, k: int32(i), fold: n.fold})
	}
	return ix
}

// wordAt loads the 8 bytes of s from at, little-endian, zeros past its
// end.
func wordAt(s string, at int) (uint64, uint64) {
	if at+8 <= len(s) {
		return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[at:]), 8)), ^uint64(0)
	}
	var b [8]byte
	copy(b[:], s[at:])
	return binary.LittleEndian.Uint64(b[:]), 1<<(8*(len(s)-at)) - 1
}

// lower8 lower-cases the ASCII capitals of a word, as lowerByte does each
// byte (SWAR: a byte's high bit marks 'A' <= c <= 'Z' below 0x80, and
// becomes the 0x20 that is added).
func lower8(x uint64) uint64 {
	const l = 0x0101010101010101
	low := x & (l * 127)
	upper := (low + l*(128-'A')) &^ (low + l*(127-'Z')) &^ x & (l * 128)
	return x | upper>>2
}

func (ix *index) setSkip(a, b byte) {
	p := uint16(a) | uint16(b)<<8
	ix.skip[p] = 1
}

// scan calls hit for every needle occurrence in s, in order of position.
// hit returns false to stop the scan.
func (ix *index) scan(s string, hit func(n *needle, at int) bool) {
	ix.scanRange(s, 0, len(s), hit)
}

// scanRange is scan for the occurrences that start in s[from:to]; they
// may end past to (the comparison reads s to its end). The ranges of a
// partition of s together find what scan finds, in the same order.
func (ix *index) scanRange(s string, from, to int, hit func(n *needle, at int) bool) {
	to = min(to, len(s))
	if len(s) < 2 || from >= to {
		return
	}
	skip, pairs := ix.skip, &ix.pairs
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	// The even pair at j covers the starts j-1 and j: the pairs from the
	// even j at or before from to the one at to cover [from, to). The
	// first pair and the last few are checked one by one against the
	// range; the word loop reads pairs whose starts are all inside it.
	j := from &^ 1
	if j+1 < len(b) && skip[uint16(b[j])|uint16(b[j+1])<<8] != 0 && !ix.startsNear(s, j, from, to, hit) {
		return
	}
	j += 2
	base := unsafe.Pointer(unsafe.StringData(s))
	for last := min(len(b), to+1) - 8; j <= last; j += 8 {
		x := binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(base, j)), 8)) // j+8 <= len(b)
		p0, p1, p2, p3 := uint16(x), uint16(x>>16), uint16(x>>32), uint16(x>>48)
		m := uint64(skip[p0]) | uint64(skip[p1])<<1 | uint64(skip[p2])<<2 | uint64(skip[p3])<<3
		for m != 0 {
			k := j + 2*bits.TrailingZeros64(m)
			m &= m - 1
			// startsNear, by hand: most candidates fail the first
			// test, and a call for each costs more than the test.
			q := uint16(b[k-1])<<8 | uint16(b[k])
			if pairs[q>>6]&(1<<(q&63)) != 0 && ix.third(s, k-1) && !ix.at(s, k-1, hit) {
				return
			}
			q = uint16(b[k])<<8 | uint16(b[k+1])
			if pairs[q>>6]&(1<<(q&63)) != 0 && ix.third(s, k) && !ix.at(s, k, hit) {
				return
			}
		}
	}
	for ; j+1 < len(b) && j <= to; j += 2 {
		if skip[uint16(b[j])|uint16(b[j+1])<<8] != 0 && !ix.startsNear(s, j, from, to, hit) {
			return
		}
	}
	if k := len(s) - 2; len(s)%2 == 1 && k >= from && k < to {
		// the one start no even pair covers
		if q := uint16(s[k])<<8 | uint16(s[k+1]); pairs[q>>6]&(1<<(q&63)) != 0 && ix.third(s, k) {
			ix.at(s, k, hit)
		}
	}
}

// startsNear checks the starts j-1 and j that lie in [from, to), for an
// even j whose pair has its skip bit; false when hit stopped the scan.
func (ix *index) startsNear(s string, j, from, to int, hit func(n *needle, at int) bool) bool {
	if j > from && j <= to {
		p := uint16(s[j-1])<<8 | uint16(s[j])
		if ix.pairs[p>>6]&(1<<(p&63)) != 0 && ix.third(s, j-1) && !ix.at(s, j-1, hit) {
			return false
		}
	}
	p := uint16(s[j])<<8 | uint16(s[j+1])
	if j >= from && j < to && ix.pairs[p>>6]&(1<<(p&63)) != 0 && ix.third(s, j) {
		return ix.at(s, j, hit)
	}
	return true
}

// third reports whether a needle may start at s[at], whose pair has its
// bit in pairs: the three bytes from at have their bit in tri.
func (ix *index) third(s string, at int) bool {
	if at+2 >= len(s) {
		return true // only a two-byte needle fits: at compares
	}
	h := triHash(s[at], s[at+1], s[at+2])
	return ix.tri[h>>6]&(1<<(h&63)) != 0
}

// at calls hit for every needle that starts at s[at], where pairs and
// third have passed; false when hit stopped the scan.
func (ix *index) at(s string, at int, hit func(n *needle, at int) bool) bool {
	lp := pairOf(s[at], s[at+1])
	w, _ := wordAt(s, at)
	lw := lower8(w)
	for _, h := range ix.lists[ix.slot[lp]-1] {
		x := w
		if h.fold {
			x = lw
		}
		if x&h.mask != h.word {
			continue
		}
		n := &ix.needles[h.k]
		if len(s)-at < len(n.text) {
			continue
		}
		if n.fold {
			if len(n.text) > 8 && !equalFoldLower(s[at+8:at+len(n.text)], n.text[8:]) {
				continue
			}
		} else if len(n.text) > 8 && s[at+8:at+len(n.text)] != n.text[8:] {
			continue
		}
		for k := h.k; k >= 0; k = ix.same[k] {
			if !hit(&ix.needles[k], at) {
				return false
			}
		}
	}
	return true
}

// triHash hashes three bytes into 16 bits, each with its 0x20 bit set
// (lower-cased, and some other bytes with them: the hash only filters).
func triHash(a, b, c byte) uint16 {
	x := (uint32(a)<<16 | uint32(b)<<8 | uint32(c)) | 0x202020
	return uint16((x * 2654435761) >> 16)
}

// equalFoldLower reports whether s equals lower (already lower case) under
// ASCII case folding.
func equalFoldLower(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		if lowerByte[s[i]] != lower[i] {
			return false
		}
	}
	return true
}
