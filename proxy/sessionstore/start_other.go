//go:build unix && !linux && !darwin

package sessionstore

import "errors"

// processStart is known on Linux and macOS only: elsewhere no session is
// shared, and each mcpguard keeps its labels to itself.
func processStart(int) (string, error) {
	return "", errors.New("process start times are not read on this system")
}

// processArgs is read on Linux and macOS only.
func processArgs(int) ([]string, int, error) {
	return nil, 0, errors.New("process arguments are not read on this system")
}
