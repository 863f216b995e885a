//go:build unix && !linux && !darwin

package sessionstore

import "errors"

// processStart is known on Linux and macOS only: elsewhere no session is
// shared, and each mcpguard keeps its labels to itself.
func processStart(int) (string, error) {
	return "", errors.New("process start times are not read on this system")
}
