package rules

import (
	"sync"
	"testing"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// One check value serves every request: run each from several goroutines
// (go test -race) and edit the returned Findings, which must not leak into
// the next caller's.
func TestConcurrentUse(t *testing.T) {
	tr := newPathTree(t)
	paths, err := NewPathScope([]string{tr.root})
	if err != nil {
		t.Fatal(err)
	}
	pattern, _ := NewPattern(`^x$`, "", "")
	deny, _ := NewDenyPattern(`y`, "", "")
	checks := []struct {
		check     Check
		bad, good string
		code      string
	}{
		{check: newTestFlags(t), bad: "--ro", good: "-v", code: codes.DangerousFlag},
		{check: NewShellMetachars(), bad: "$(x)", good: "x", code: codes.ShellMetachar},
		{check: NewControlChars(), bad: "\x1b", good: "x", code: codes.ControlChars},
		{check: pattern, bad: "y", good: "x", code: codes.Pattern},
		{check: deny, bad: "y", good: "x", code: codes.Pattern},
		{check: NewDuration(0, false), bad: "-1s", good: "1s", code: codes.InvalidTimeout},
		{check: paths, bad: "../outside", good: "sub", code: codes.PathScope},
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				for _, c := range checks {
					f := c.check.Check(c.bad)
					if f == nil || f.Code != c.code {
						t.Errorf("%T: %+v for a bad value", c.check, f)
						return
					}
					f.Code, f.Reason = "EDITED", "edited"
					if f := c.check.Check(c.good); f != nil {
						t.Errorf("%T: %+v for a good value", c.check, f)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
