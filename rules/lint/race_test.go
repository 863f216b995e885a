//go:build race

package lint

// linearUnit: the race detector makes every memory access several times
// slower, so TestLinearTime compares smaller texts under it; the ratio of
// the two sizes, and so what the test checks, does not change.
const linearUnit = 4 << 10

// raceEnabled: FuzzCheck's seeds (every directive in every disguise) run
// a third of them under the race detector, which adds nothing to the
// one-goroutine lint and slows it tenfold; CI runs them all without it.
const raceEnabled = true
