package lazyregexp

import (
	"sync"
	"testing"
)

// TestNew: the same compiled expression on every call, from any number
// of goroutines, matching as regexp does.
func TestNew(t *testing.T) {
	re := New(`^a+b$`)
	first := re()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if re() != first {
				t.Error("a second compilation")
			}
		}()
	}
	wg.Wait()
	if !first.MatchString("aab") || first.MatchString("ab ") {
		t.Error("the expression does not match as written")
	}
}

// TestBadExpressionPanicsInTests: in a test binary a bad expression fails
// where it is declared, not on a first use that a test may never reach.
func TestBadExpressionPanicsInTests(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New accepted an expression that does not compile")
		}
	}()
	New(`(unclosed`)
}
