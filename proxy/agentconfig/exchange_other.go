//go:build !linux && !darwin

package agentconfig

// exchange has no atomic form here: commit renames after its re-check.
func exchange(a, b string) error { return errNoExchange }
