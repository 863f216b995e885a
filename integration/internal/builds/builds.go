// Package builds names where the integration tests and the bench test
// build mcpguard and their helper binaries.
package builds

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Dir returns the checkout's directory for the binaries its tests build,
// under the user's cache, and creates it. go build skips the link, most
// of a warm build, when the binary at its -o is up to date, so a binary
// is linked again only when its sources changed. The directory is named
// by a hash of the module root: checkouts of other revisions on one
// machine never share a binary.
func Dir(moduleRoot string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(moduleRoot))
	dir := filepath.Join(cache, "mcpguard-tests", hex.EncodeToString(sum[:6]))
	return dir, os.MkdirAll(dir, 0o700)
}
