//go:build !race

package lint

const linearUnit = 8 << 10
