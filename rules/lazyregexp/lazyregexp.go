// Package lazyregexp compiles a regular expression on its first use
// instead of at start. Every check is linked into the one binary, and a
// regexp compiled in a package's var block is paid for by every process
// before it answers the agent's first message, also by the many that
// never run that check (the baseline relay never classifies a tool for
// a starter policy nor reads an agent's configuration).
package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// New returns a function that compiles expr on its first call and returns
// that same *regexp.Regexp on every call, safe for concurrent use. An
// expr that does not compile panics on the first call; in a test binary
// New compiles at once, so that any test of the package finds it.
func New(expr string) func() *regexp.Regexp {
	re := sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
	if inTest {
		re()
	}
	return re
}

// inTest reports whether this is a test binary (go test names it
// pkg.test).
var inTest = len(os.Args) > 0 && strings.HasSuffix(os.Args[0], ".test")
