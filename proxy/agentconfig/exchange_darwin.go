package agentconfig

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the files a and b atomically (renamex_np RENAME_SWAP).
func exchange(a, b string) error {
	err := unix.RenamexNp(a, b, unix.RENAME_SWAP)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return errNoExchange
	}
	return err
}
