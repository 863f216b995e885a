package rules

// Eight-byte (SWAR) scans for the common case of plain ASCII text, so that
// a check pays per word of memory rather than per byte for it.

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// isASCII reports whether s has no byte >= 0x80.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if load64(s[i:])&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// printableRun is the length of the leading run of printable ASCII in s,
// bytes 0x20 to 0x7E: no control character, no DEL, nothing non-ASCII.
func printableRun(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := load64(s[i:])
		// High bit set in a byte >= 0x80, in a byte whose low seven bits
		// are 0x7F (the carry of +1), and in a byte below 0x20 (the borrow
		// of -0x20, masked by ^w so bytes >= 0x80 do not count twice).
		if (w|(w&^highs+ones)|(w-0x20*ones)&^w)&highs != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F {
			return i
		}
	}
	return i
}

// load64 reads the first eight bytes of s as a little-endian word; the
// compiler turns it into one load.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
