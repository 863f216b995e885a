package policy

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/mcpguard/mcpguard/rules/links"
)

// HeadCheck judges the head of a long line from the server while the rest
// of it is read: on a goroutine of its own, the raw checks whose verdict
// on a byte depends only on the bytes around it (the links filter's
// markers of an image or a tag that loads something, links.ImageMarked)
// read what has arrived, so that once the line is whole only its tail is
// left to them. It decides nothing and forwards nothing: what it found is
// one input of the whole line's judgement (Session.EgressAfter), which
// still starts only once the line is whole and parsed.
//
// The reader calls Arrived with the line so far (each a longer start of
// the same line, its bytes never changed afterwards) as it reads a long
// line, and Done when the line has ended, however it ended; Done waits
// for the goroutine. A HeadCheck serves one reader, one line at a time;
// its zero value is ready.
type HeadCheck struct {
	mu      sync.Mutex
	changed sync.Cond // a new head, the line's end, the goroutine's progress or end
	head    []byte    // the line so far
	clean   int       // head's first bytes in which no marker starts
	marked  bool      // a marker starts in head
	ended   bool      // Done was called
	running bool      // the goroutine runs
}

// headMin is the length from which a line's head is judged while the rest
// arrives: the size from which egress judges a message on every core.
const headMin = concurrentMin

// headPiece is how much of the head the goroutine reads between looks at
// whether the line has ended, so that Done waits for that much at most.
const headPiece = 256 << 10

// Arrived hands the head of the line being read to the goroutine, which
// it starts when the head is long enough. It does not wait.
func (h *HeadCheck) Arrived(head []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		if len(head) < headMin || runtime.GOMAXPROCS(0) < 2 {
			return
		}
		h.changed.L = &h.mu
		h.clean, h.marked, h.ended, h.running = 0, false, false, true
		go h.judge()
	}
	h.head = head
	h.changed.Broadcast()
}

// Done ends the judgement of the line's head, waiting for the piece the
// goroutine reads, and returns how many of the line's first bytes hold no
// start of a links.ImageMarked marker: 0 when none were judged.
func (h *HeadCheck) Done() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return 0
	}
	h.ended = true
	h.changed.Broadcast()
	for h.running {
		h.changed.Wait()
	}
	h.head = nil
	if h.marked {
		return 0
	}
	return h.clean
}

// judge reads the heads it is given, a piece at a time, until the line
// ends. A marker that starts before len(head)-MarkReach is judged by
// bytes that are in.
func (h *HeadCheck) judge() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		for !h.ended && (h.marked || h.clean >= len(h.head)-links.MarkReach) {
			h.changed.Wait()
		}
		if h.ended {
			h.running = false
			h.changed.Broadcast()
			return
		}
		head, from := h.head, h.clean
		to := min(len(head)-links.MarkReach, from+headPiece)
		h.mu.Unlock()
		marked := links.ImageMarked(unsafe.String(&head[0], len(head)), from, to)
		h.mu.Lock()
		if marked {
			h.marked = true
		} else {
			h.clean = to
		}
		h.changed.Broadcast()
	}
}
