package pins

import (
	"testing"

	"github.com/mcpguard/mcpguard/rules/codes"
)

// TestReloadKeepsFirstSightPins: a reload without a lock file is no way
// to reset pins: a rug pull withheld before it stays withheld, and the
// pins taken on first sight still judge the next list.
func TestReloadKeepsFirstSightPins(t *testing.T) {
	s := NewSession(Options{})
	judge(s, Tool, echoV1, sumV1)
	judge(s, Tool, echoV2, sumV1)
	r := s.Reload(Options{})
	if b := r.Check(Tool, "echo"); b == nil || b.Code != codes.ToolChanged {
		t.Fatalf("withheld echo after reload: Check = %v", b)
	}
	if b := r.Check(Tool, "ECHO"); b == nil {
		t.Fatal("a loose spelling of withheld echo passes after reload")
	}
	if kept, _ := judge(r, Tool, echoV2, sumV1); len(kept) != 1 {
		t.Fatalf("after reload the changed echo is kept: %v", kept)
	}
	if b := r.Check(Tool, "sum"); b != nil {
		t.Fatalf("sum: %v", b)
	}
}

// TestReloadJudgesAgainstNewLock: after `mcpguard pin` accepts a
// server's update and SIGHUP reloads the lock, the item is judged again
// from the definition last listed: the updated tool is released, a tool
// whose listed definition differs from its new pin is withheld, and one
// the lock no longer pins is refused, all without a new list.
func TestReloadJudgesAgainstNewLock(t *testing.T) {
	old := NewLock()
	old.Items[Tool]["echo"] = mustCanonical(t, echoV1)
	old.Items[Tool]["sum"] = mustCanonical(t, sumV1)
	s := NewSession(Options{Lock: old})
	judge(s, Tool, echoV2, sumV1) // the server updated echo: withheld
	if b := s.Check(Tool, "echo"); b == nil {
		t.Fatal("echo v2 against a v1 lock passes")
	}
	repinned := NewLock()
	repinned.Items[Tool]["echo"] = mustCanonical(t, echoV2)
	r := s.Reload(Options{Lock: repinned})
	if b := r.Check(Tool, "echo"); b != nil {
		t.Fatalf("echo v2 after the lock pins v2: %v", b)
	}
	if b := r.Check(Tool, "sum"); b == nil || b.Code != codes.ToolUnpinned {
		t.Fatalf("sum, no longer in the lock: %v", b)
	}
	back := NewLock()
	back.Items[Tool]["echo"] = mustCanonical(t, echoV1)
	back.Items[Tool]["sum"] = mustCanonical(t, sumV1)
	r2 := r.Reload(Options{Lock: back})
	if b := r2.Check(Tool, "echo"); b == nil || b.Code != codes.ToolChanged {
		t.Fatalf("echo listed as v2, lock back at v1: %v", b)
	}
	if b := r2.Check(Tool, "sum"); b != nil {
		t.Fatalf("sum pinned again: %v", b)
	}
}
