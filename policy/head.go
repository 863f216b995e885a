package policy

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/segmentio/asm/ascii"

	"github.com/mcpguard/mcpguard/rules/links"
)

// HeadCheck judges the head of a long line from the server while the rest
// of it is read: on a goroutine of its own, the raw checks whose verdict
// on a byte depends only on the bytes around it read what has arrived,
// so that once the line is whole only its tail is left to them. They are
// the links filter's search for the markers of an image or a tag that
// loads something (links.ImageMarked), and the text check of code points
// and escapes (rawNeedsText, read up to cuts no code point or escape
// crosses, as needsText splits a text). It decides nothing and forwards
// nothing: what it found (a Head) is one input of the whole line's
// judgement (Session.EgressAfter), which starts only once the line is
// whole and parsed.
//
// The reader calls Arrived with the line so far (each a start of the
// same line no shorter than the one before, its bytes never changed
// afterwards; the last one where the line is when it ends) as it reads a long
// line, and Done when the line has ended, however it ended; Done waits
// for the goroutine. A HeadCheck serves one reader, one line at a time;
// its zero value is ready.
type HeadCheck struct {
	mu      sync.Mutex
	changed sync.Cond // a new head, the line's end, the goroutine's progress or end
	head    []byte    // the line so far
	found   Head      // what the goroutine found in head so far
	ended   bool      // Done was called
	running bool      // the goroutine runs
}

// Head is what a HeadCheck found in the first bytes of a line: no marker
// that links.ImageMarked looks for starts in its first images bytes, and
// its first text bytes (up to a cut no code point or escape crosses) hold
// nothing that text removes or judges, unless needsText. The zero Head
// says nothing of the line.
type Head struct {
	images, text int
	needsText    bool
	textWaits    int  // the head's length when it had no cut past text
	wide         bool // the head holds a byte beyond ASCII
	// line is the first byte of the line read (of its last head, whose
	// array the reader fills; set by Done): the offsets above are the
	// line's, which are a message's only when its Raw starts there (see
	// of).
	line *byte
}

// of is f for a message whose Raw is raw: the zero Head unless raw starts
// at the first byte of the line f was found in and holds every byte f
// judged. A line with whitespace before or between its tokens is
// forwarded trimmed and compacted (message.Message.Raw): the line's
// offsets are not raw's, and a server that pads the line where the head
// ends would shift an image or a bidi override out of what is judged
// (or, padding its end, the offsets out of raw).
func (f Head) of(raw []byte) Head {
	if f.line == nil || len(raw) == 0 || f.line != unsafe.SliceData(raw) || f.images > len(raw) || f.text > len(raw) {
		return Head{}
	}
	return f
}

// imagesClean is how many first bytes hold no image marker.
func (f Head) imagesClean() int { return max(f.images, 0) }

// headMin is the length from which a line's head is judged while the rest
// arrives: the size from which egress judges a message on every core.
const headMin = concurrentMin

// headPiece is how much of the head the goroutine reads, per check,
// between looks at whether the line has ended, so that Done waits for
// that much at most.
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
		h.found, h.ended, h.running = Head{}, false, true
		go h.judge()
	}
	h.head = head
	h.changed.Broadcast()
}

// Done ends the judgement of the line's head, waiting for the piece the
// goroutine reads, and returns what it found.
func (h *HeadCheck) Done() Head {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return Head{}
	}
	h.ended = true
	h.changed.Broadcast()
	for h.running {
		h.changed.Wait()
	}
	found := h.found
	if len(h.head) > 0 {
		// Every head is a start of the one line: the offsets hold in the
		// last one's array, where the reader goes on filling the line.
		found.line = unsafe.SliceData(h.head)
	}
	h.head = nil
	return found
}

// judge reads the heads it is given, a piece at a time, until the line
// ends.
func (h *HeadCheck) judge() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		for !h.ended && !h.found.more(h.head) {
			h.changed.Wait()
		}
		if h.ended {
			h.running = false
			h.changed.Broadcast()
			return
		}
		head, found := h.head, h.found
		h.mu.Unlock()
		found.read(head)
		h.mu.Lock()
		h.found = found
		h.changed.Broadcast()
	}
}

// imagesTo is how far a head's image markers can be judged: a marker
// that starts before it is judged by bytes that are in.
func imagesTo(head []byte) int { return len(head) - links.MarkReach }

// more reports whether a check has more of head to read.
func (f Head) more(head []byte) bool {
	return f.images >= 0 && f.images < imagesTo(head) || f.moreText(head)
}

// moreText reports whether the text check has more of head to read. It
// reads a head that holds a byte beyond ASCII: in plain ASCII the parse
// finds, at no cost, what text would (message.Message.TextPlain), and
// where it does not (an escape), the tail's check reads the line whole.
func (f Head) moreText(head []byte) bool {
	return f.wide && !f.needsText && f.text < len(head)-1 && f.textWaits != len(head)
}

// read reads a piece of head more with each check that has more to read.
// A marker found sets images to -1 (imagesClean 0); a text finding sets
// needsText.
func (f *Head) read(head []byte) {
	if f.images >= 0 && f.images < imagesTo(head) {
		to := min(imagesTo(head), f.images+headPiece)
		f.wide = f.wide || !ascii.Valid(head[f.images:to])
		if links.ImageMarked(unsafe.String(&head[0], len(head)), f.images, to) {
			f.images = -1
		} else {
			f.images = to
		}
	}
	if f.moreText(head) {
		// Any byte of head can be a cut: textCut reads the bytes before
		// it and the byte itself.
		cut := textCut(head, min(f.text+headPiece, len(head)-1), len(head))
		if cut < 0 {
			f.textWaits = len(head) // for more bytes
			return
		}
		f.needsText = rawNeedsText(head[f.text:cut])
		f.text = cut
	}
}
