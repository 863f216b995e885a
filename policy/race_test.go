//go:build race

package policy

// raceEnabled: the race detector makes every memory access several times
// slower, so the tests that compare running times work on less input
// under it (the ratios they check do not depend on the size).
const raceEnabled = true
