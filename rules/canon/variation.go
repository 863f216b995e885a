package canon

// variationBase is one base character of a variation sequence and the
// selectors it takes: bit i for U+FE00+i (i < 16), bits 16–18 for the
// Mongolian free variation selectors U+180B–U+180D, bit 19 for U+180F.
type variationBase struct {
	base      rune
	selectors uint32
}
