//go:build !race

package skeleton

const sweepStep = 1
