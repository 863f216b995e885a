//go:build race

package skeleton

// sweepStep: the race detector adds nothing to the one-goroutine sweep of
// every code point in TestFoldedAgreesWithLatin and slows it tenfold, so
// under it the sweep reads every 17th code point (the table's entries are
// all still read); without it, every one.
const sweepStep = 17
