package proxy

import (
	"sync"
	"time"
)

// turns tracks the work that can write to the agent or the server beside
// the egress loop (the ingress loop's message, a timer, a reload), so
// that the end of a run waits for what that work has decided to write:
// without it a reply taken out of the in-flight table just before the
// run ended was written after the last flush, or never.
type turns struct {
	mu    sync.Mutex
	ended bool
	wg    sync.WaitGroup
}

// begin starts a turn; false once the run has ended (the work is not to
// be done: everything in flight has been answered).
func (t *turns) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *turns) done() { t.wg.Done() }

// do runs f in a turn, or not at all once the run has ended.
func (t *turns) do(f func()) {
	if !t.begin() {
		return
	}
	defer t.done()
	f()
}

// end lets no turn begin and waits up to grace for those in progress (a
// write to a peer that does not read can block them).
func (t *turns) end(grace time.Duration) {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		t.wg.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-time.After(grace):
	}
}
