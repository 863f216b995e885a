package canon

import (
	"encoding/binary"
	"testing"
	"unicode/utf8"
)

// TestWordMasks checks the SWAR masks against a byte table for every byte
// value in every lane, with the other lanes plain and with them hostile
// (so a carry or borrow between lanes would show).
func TestWordMasks(t *testing.T) {
	text := func(c byte) bool { return c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c >= 0x7F }
	suspect := func(c byte) bool { return c < 0x20 || c >= 0x7F }
	free := func(c byte) bool { return c < 0x20 || c >= 0x7F || c == '`' }
	for _, fill := range []byte{'a', 0x00, 0x1F, 0x20, 0x7F, 0x80, 0xFF, '\n', '`'} {
		for lane := range 8 {
			for c := range 256 {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[lane] = byte(c)
				w := binary.LittleEndian.Uint64(b[:])
				for i := range 8 {
					bit := uint64(0x80) << (8 * i)
					if got := suspect8(w)&bit != 0; got != suspect(b[i]) {
						t.Fatalf("suspect8(% x) lane %d = %v", b, i, got)
					}
					exempt := isByte(w, '\t') | isByte(w, '\n') | isByte(w, '\r') | isByte(w, '\f')
					if got := suspect8(w)&^exempt&bit != 0; got != text(b[i]) {
						t.Fatalf("text mask of (% x) lane %d = %v", b, i, got)
					}
					if got := dirtyFree8(w)&bit != 0; got != free(b[i]) {
						t.Fatalf("dirtyFree8(% x) lane %d = %v", b, i, got)
					}
				}
			}
		}
	}
}

// TestClassify holds classify to utf8.DecodeRune and the list of removed
// code points, for every 1- to 3-byte sequence and the 4-byte sequences
// around every boundary.
func TestClassify(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		size, cl := classify(b, 0)
		r, n := utf8.DecodeRune(b)
		want := kept
		switch {
		case r == utf8.RuneError && n == 1, dropped(r):
			want = removed
		case r == 0x2028 || r == 0x2029 || derivedInvisible(r):
			want = judged
		}
		if want != cl || n != size {
			t.Fatalf("classify(% x) = %d, %v; want %d, %v (U+%04X)", b, size, cl, n, want, r)
		}
	}
	for c0 := 0x80; c0 < 0x100; c0++ {
		check([]byte{byte(c0)})
		for c1 := range 256 {
			check([]byte{byte(c0), byte(c1)})
			if c0 >= 0xE0 && c0 < 0xF0 {
				for c2 := range 256 {
					check([]byte{byte(c0), byte(c1), byte(c2)})
				}
			}
		}
	}
	edges := []byte{0x00, 0x7F, 0x80, 0x81, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF}
	for c0 := 0xF0; c0 < 0x100; c0++ {
		for c1 := range 256 {
			for _, c2 := range edges {
				for _, c3 := range edges {
					check([]byte{byte(c0), byte(c1), c2, c3})
					check([]byte{byte(c0), byte(c1), c2})
				}
			}
		}
	}
}
