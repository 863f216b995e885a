//go:build race

package lint

// linearUnit: the race detector makes every memory access several times
// slower, so TestLinearTime compares smaller texts under it; the ratio of
// the two sizes, and so what the test checks, does not change.
const linearUnit = 4 << 10
