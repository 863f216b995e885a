//go:build !race

package lint

const linearUnit = 8 << 10

const raceEnabled = false
