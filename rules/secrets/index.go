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

// index finds every needle in a text in one pass: a filter of a start's
// first three bytes (of its first pair near a byte beyond ASCII), then
// one of its first four, and where both pass the needles compared. The
// filters ASCII text reads are small (tri 1 KiB, quad 2 KiB, short 512
// bytes), so that a short message's scan reads few cache lines.
type index struct {
	// tri has a bit for the hash (triHashes) of the first three bytes
	// of every needle that are ASCII (of a two-byte needle's with every
	// ASCII third byte), each byte with its 0x20 bit set: a start in
	// ASCII text costs a load and a bit test.
	tri [128]uint64
	// skip says, for every byte pair, where a needle may start around
	// it: startHere (it is a needle's first pair) and startBefore (it is
	// a needle's second pair, or a two-byte needle's second byte starts
	// it). A needle starts at j or j-1 only where the pair at an even j
	// has one of them, so scanPairs reads every other pair, and tests
	// only the starts they name. Its pairs are little-endian (the first
	// byte low), as a word loaded from the text holds them. A byte a
	// pair, not two bits: the four lookups a word are a load each. It is
	// the filter of long texts (64 KiB that stay in the caches) and of
	// the words beyond ASCII in short ones.
	skip *[1 << 16]byte
	// quad is a Bloom filter of the first four bytes of every needle,
	// of a three-byte needle's bytes followed by 0xff and of a two-byte
	// needle's followed by two (quadHash): two bits in one of its words.
	// One load, a multiply and two bit tests (maybe) reject nearly every
	// start of ordinary text.
	quad [256]uint64
	// short has a bit for the classes (classPair) of every pair that
	// starts a needle of two or three bytes: only there are their bits
	// in quad tested.
	short [1 << 12 / 64]uint64
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
				ix.setSkip(a, b, startHere)
			}
		}
		for _, b := range caseVariants(n.text[1], n.fold) {
			if len(n.text) == 2 {
				for c := range 256 {
					ix.setSkip(b, byte(c), startBefore)
				}
				continue
			}
			for _, c := range caseVariants(n.text[2], n.fold) {
				ix.setSkip(b, c, startBefore)
			}
		}
		if len(n.text) < 4 {
			p := classPair(uint32(n.text[0]) | uint32(n.text[1])<<8)
			ix.short[p>>6] |= 1 << (p & 63)
		}
		switch {
		case len(n.text) == 2 && n.text[0]|n.text[1] < 0x80:
			for c := range 0x80 {
				ix.addTri(uint64(n.text[0]) | uint64(n.text[1])<<8 | uint64(c)<<16)
			}
		case len(n.text) > 2 && n.text[0]|n.text[1]|n.text[2] < 0x80:
			ix.addTri(uint64(n.text[0]) | uint64(n.text[1])<<8 | uint64(n.text[2])<<16)
		}
		p := pairOf(n.text[0], n.text[1])
		var q [4]byte
		copy(q[:], n.text)
		for i := len(n.text); i < 4; i++ {
			q[i] = 0xff
		}
		ix.addQuad(binary.LittleEndian.Uint32(q[:]))
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

// The bits of a skip entry: a needle may start at the pair, one byte
// before it.
const (
	startBefore = 1
	startHere   = 2
)

func (ix *index) setSkip(a, b byte, bit byte) {
	ix.skip[uint16(a)|uint16(b)<<8] |= bit
}

// classPair is the index in short of the pair at the low bytes of x:
// the low six bits of each byte with its 0x20 bit set, the letters'
// two cases alike.
func classPair(x uint32) uint32 {
	f := x | 0x2020
	return f&0x3f | f>>2&0xfc0
}

// scan calls hit for every needle occurrence in s, in order of position.
// hit returns false to stop the scan.
func (ix *index) scan(s string, hit func(n *needle, at int) bool) {
	ix.scanRange(s, 0, len(s), hit)
}

// scanRange is scan for the occurrences that start in s[from:to]; they
// may end past to (the comparison reads s to its end). The ranges of a
// partition of s together find what scan finds, in the same order. A
// range of up to shortScan bytes is read by scanStarts, which reads few
// cache lines, a longer one by scanPairs, which costs fewer instructions
// a byte.
func (ix *index) scanRange(s string, from, to int, hit func(n *needle, at int) bool) {
	if to-from > shortScan {
		ix.scanPairs(s, from, to, hit)
		return
	}
	ix.scanStarts(s, from, to, hit)
}

// shortScan is the longest range scanStarts reads: the bench's messages
// and most calls' (a few hundred bytes) are far shorter; past a few KiB
// scanPairs's instructions cost more than its table's cache lines.
const shortScan = 2 << 10

// scanStarts is scanRange reading s a word of eight bytes at a time, for
// the six starts whose first three bytes the word holds. In a word of
// ASCII text each start is looked up in tri (1 KiB); in a word with a
// byte beyond ASCII, its pair in skip. A start that passes is looked up
// in quad before the needles are compared.
func (ix *index) scanStarts(s string, from, to int, hit func(n *needle, at int) bool) {
	to = min(to, len(s)-1) // a needle has two bytes or more
	k := from
	base := unsafe.Pointer(unsafe.StringData(s))
	t := &ix.tri
	for last := min(len(s)-8, to-6); k <= last; k += 6 {
		w := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, k))[:]) // k+8 <= len(s)
		if w&(l8*0x80) != 0 {
			for p := k; p < k+6; p++ {
				if ix.skip[uint16(w>>(8*(p-k)))]&startHere != 0 && !ix.check(s, p, hit) {
					return
				}
			}
			continue
		}
		// The six starts, by hand: tri's bit of each (triHashes), the
		// start's hash in the low bits of v.
		v := triHashes(w | l8*0x20)
		if t[v>>6&0x7f]>>(v&63)&1 != 0 && !ix.check(s, k, hit) {
			return
		}
		if v >>= 8; t[v>>6&0x7f]>>(v&63)&1 != 0 && !ix.check(s, k+1, hit) {
			return
		}
		if v >>= 8; t[v>>6&0x7f]>>(v&63)&1 != 0 && !ix.check(s, k+2, hit) {
			return
		}
		if v >>= 8; t[v>>6&0x7f]>>(v&63)&1 != 0 && !ix.check(s, k+3, hit) {
			return
		}
		if v >>= 8; t[v>>6&0x7f]>>(v&63)&1 != 0 && !ix.check(s, k+4, hit) {
			return
		}
		if v >>= 8; t[v>>6&0x7f]>>(v&63)&1 != 0 && !ix.check(s, k+5, hit) {
			return
		}
	}
	for ; k < to; k++ {
		if !ix.check(s, k, hit) {
			return
		}
	}
}

// scanPairs is scanRange reading every other byte pair of s in skip.
func (ix *index) scanPairs(s string, from, to int, hit func(n *needle, at int) bool) {
	to = min(to, len(s))
	if len(s) < 2 || from >= to {
		return
	}
	skip := ix.skip
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
	for last := min(len(b)-2, to+1) - 8; j <= last; j += 8 {
		x := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(base, j))[:]) // j+8 <= len(b)
		p0, p1, p2, p3 := uint16(x), uint16(x>>16), uint16(x>>32), uint16(x>>48)
		// Bit i of m: a needle may start at j-1+i.
		m := uint64(skip[p0]) | uint64(skip[p1])<<2 | uint64(skip[p2])<<4 | uint64(skip[p3])<<6
		for m != 0 {
			k := j - 1 + bits.TrailingZeros64(m)
			m &= m - 1
			x := binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(base, k))[:]) // k+4 <= j+10 <= len(b)
			// maybe, written out: it is not inlined.
			if (ix.quadBits(x) || ix.shortPair(x) && ix.shortBits(x)) && !ix.at(s, k, hit) {
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
		ix.at(s, k, hit) // the one start no even pair covers
	}
}

// startsNear checks the starts j-1 and j that lie in [from, to), for an
// even j whose pair has its skip bit; false when hit stopped the scan.
func (ix *index) startsNear(s string, j, from, to int, hit func(n *needle, at int) bool) bool {
	if j > from && j <= to && !ix.check(s, j-1, hit) {
		return false
	}
	return j < from || j >= to || ix.check(s, j, hit)
}

// check calls hit for every needle that starts at s[at] when maybeAt
// passes it; false when hit stopped the scan.
func (ix *index) check(s string, at int, hit func(n *needle, at int) bool) bool {
	return !ix.maybeAt(s, at) || ix.at(s, at, hit)
}

// triHashes hashes the three bytes from each byte i < 6 of w into the 13
// bits of its result from bit 8i (tri's word, then its bit): each of
// them is the exclusive or of three bits of the three bytes.
func triHashes(w uint64) uint64 { return w ^ w>>7 ^ w>>10 }

// quadMul is the multiplier of quad's hash (Fibonacci hashing: 2^64
// over the golden ratio); its high bits are mixed well.
const quadMul = 0x9E3779B97F4A7C15

// addTri sets the bit of the three low bytes of x in tri, with their
// 0x20 bits set.
func (ix *index) addTri(x uint64) {
	h := triHashes(x | l8*0x20)
	ix.tri[h>>6&0x7f] |= 1 << (h & 63)
}

// maybeAt reports whether a needle may start at s[at] (see maybe); near
// the end of s, at compares.
func (ix *index) maybeAt(s string, at int) bool {
	return at+4 > len(s) || ix.maybe(binary.LittleEndian.Uint32(unsafe.Slice(unsafe.StringData(s[at:]), 4)))
}

// maybe reports whether a needle may start with the four bytes x
// (little-endian): they, or their first three or two followed by 0xff
// where a short needle starts with their pair, have their bits in quad.
func (ix *index) maybe(x uint32) bool {
	return ix.quadBits(x) || ix.shortPair(x) && ix.shortBits(x)
}

// shortPair reports whether the pair x starts with is in short.
func (ix *index) shortPair(x uint32) bool {
	p := classPair(x)
	return ix.short[p>>6]&(1<<(p&63)) != 0
}

// shortBits reports whether the first three or two bytes of x, followed
// by 0xff, have their bits in quad.
func (ix *index) shortBits(x uint32) bool {
	return ix.quadBits(x|0xff<<24) || ix.quadBits(x|0xffff<<16)
}

// quadBits reports whether x has both its bits in quad.
func (ix *index) quadBits(x uint32) bool {
	h := quadHash(x)
	t := ix.quad[h>>56]
	return t>>(h>>50&63)&1 != 0 && t>>(h>>44&63)&1 != 0
}

func (ix *index) addQuad(x uint32) {
	h := quadHash(x)
	ix.quad[h>>56] |= 1<<(h>>50&63) | 1<<(h>>44&63)
}

// at calls hit for every needle that starts at s[at] (at+2 <= len(s));
// false when hit stopped the scan.
func (ix *index) at(s string, at int, hit func(n *needle, at int) bool) bool {
	k := ix.slot[pairOf(s[at], s[at+1])]
	if k == 0 {
		return true
	}
	w, _ := wordAt(s, at)
	lw := lower8(w)
	for _, h := range ix.lists[k-1] {
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

// quadHash hashes four bytes (little-endian in x), each byte with its
// 0x20 bit set (lower-cased, and some other bytes with them: the hash
// only filters).
func quadHash(x uint32) uint64 {
	return uint64(x|0x20202020) * quadMul
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
