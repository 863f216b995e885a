package eventlog

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Budget bounds the lines one Logger writes, so that a flood of decisions
// (a hostile server's junk lines, notifications, server requests; an
// agent's loop of refused calls) costs a bounded amount of log whatever its
// rate. Within each Window at most PerKind lines of one kind and Lines
// lines in all of each source are written; the others are counted, and
// when the window ends each kind that lost lines gets one summary line:
// the kind's fields with "suppressed": N, the number of lines it stands
// for.
//
// A kind is a line's event, direction, method, tool, error_code, rule and
// action (not its id, field or message, which a flood varies). At most
// Kinds kinds of each source are told apart per window; lines of further
// kinds are counted under their event, direction, error_code and action
// alone (values mcpguard's code chooses, not a peer), so a peer varying
// its method or tool names cannot buy itself lines nor erase which check
// refused.
//
// The three sources are the agent's own messages (direction ingress,
// other than answers to the server's requests), mcpguard's own events
// (start, exit, reload, warnings, labels: a few a process, or one a
// SIGHUP) and everything else, whose rate the server drives. Each has its
// own lines and kinds, so a hostile server's flood cannot spend the budget
// that the agent's refused calls (a prompt injection's attempt) or a
// failed reload are written from. The zero Budget writes every line.
type Budget struct {
	Window  time.Duration
	PerKind int
	Lines   int
	Kinds   int
}

// DefaultBudget writes at most 20 lines of a kind and 200 in all of each
// source a minute, plus at most one summary line a kind: a peer's flood
// costs about 3 KiB/s at most, both peers' about 6 KiB/s.
var DefaultBudget = Budget{Window: time.Minute, PerKind: 20, Lines: 200, Kinds: 256}

// kindKey is what makes two lines of the same kind (see Budget); its
// strings are already cleaned.
type kindKey struct {
	event                                    Kind
	direction, method, tool, errorCode, rule string
	action                                   Action
}

// serverAsks names the requests a server sends the client: the agent's
// answers to them come as often as the server asks, so their lines count
// against the server's source.
var serverAsks = map[string]bool{"roots/list": true, "sampling/createMessage": true, "elicitation/create": true, "ping": true}

// ownEvents are the kinds of line mcpguard writes of itself, whatever the
// peers do.
var ownEvents = map[Kind]bool{EventStart: true, EventExit: true, EventReload: true, EventWarning: true, EventLabel: true}

// source is the budget a line is written from: 0 the agent's, 1
// mcpguard's own, 2 the server's.
func (k kindKey) source() int {
	switch {
	case k.direction == Ingress && !serverAsks[k.method]:
		return 0
	case ownEvents[k.event]:
		return 1
	}
	return 2
}

// overflow is the kind a line is counted under once its source has told
// Kinds kinds apart: only fields whose values mcpguard's code chooses.
func (k kindKey) overflow() kindKey {
	return kindKey{event: k.event, direction: k.direction, errorCode: k.errorCode, action: k.action}
}

// pool is one source's count of the window.
type pool struct {
	total, kinds int
}

type kindCount struct {
	written, suppressed int
	level               zerolog.Level
}

// limiter keeps a Logger within its Budget. Summary lines are written
// when a later line finds the window over, when the window's timer fires
// (so the count is not held back when the flood stops), and by Flush.
type limiter struct {
	b     Budget
	z     *zerolog.Logger
	now   func() time.Time
	mu    sync.Mutex
	start time.Time
	pools [3]pool
	kinds map[kindKey]*kindCount
	timer *time.Timer
}

func newLimiter(b Budget, z *zerolog.Logger) *limiter {
	if b.Window <= 0 {
		return nil
	}
	return &limiter{b: b, z: z, now: time.Now, kinds: make(map[kindKey]*kindCount)}
}

// allow reports whether a line of kind k may be written now, and counts
// it when not.
func (l *limiter) allow(k kindKey, level zerolog.Level) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.start) >= l.b.Window {
		l.flushLocked(now)
	}
	p := &l.pools[k.source()]
	c := l.kinds[k]
	if c == nil && p.kinds >= l.b.Kinds {
		k = k.overflow()
		c = l.kinds[k]
	}
	if c == nil {
		c = &kindCount{level: level}
		l.kinds[k] = c
		p.kinds++
	}
	if c.written < l.b.PerKind && p.total < l.b.Lines {
		c.written++
		p.total++
		return true
	}
	c.suppressed++
	c.level = max(c.level, level)
	if l.timer == nil {
		l.timer = time.AfterFunc(l.start.Add(l.b.Window).Sub(now), l.tick)
	}
	return false
}

// tick ends the window; a window that a line already ended (and whose
// timer it could not stop) is left alone.
func (l *limiter) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= l.b.Window {
		l.flushLocked(now)
	}
}

// flush writes the summary lines now and starts a new window.
func (l *limiter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked(l.now())
}

func (l *limiter) flushLocked(now time.Time) {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	keys := make([]kindKey, 0, len(l.kinds))
	for k, c := range l.kinds {
		if c.suppressed > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b kindKey) int {
		return cmp.Or(cmp.Compare(a.event, b.event), cmp.Compare(a.direction, b.direction), cmp.Compare(a.method, b.method),
			cmp.Compare(a.tool, b.tool), cmp.Compare(a.errorCode, b.errorCode), cmp.Compare(a.rule, b.rule), cmp.Compare(a.action, b.action))
	})
	for _, k := range keys {
		c := l.kinds[k]
		e := l.z.WithLevel(c.level)
		if e == nil {
			continue
		}
		for _, f := range [...]struct{ name, v string }{{"event", string(k.event)}, {"direction", k.direction}, {"method", k.method},
			{"tool", k.tool}, {"error_code", k.errorCode}, {"rule", k.rule}, {"action", string(k.action)}} {
			if f.v != "" {
				e = e.Str(f.name, f.v)
			}
		}
		e.Int("suppressed", c.suppressed).Time("since", l.start).
			Msg(fmt.Sprintf("%d more lines of this kind were not written: the log takes at most %d lines of a kind and %d in all of each source per %s",
				c.suppressed, l.b.PerKind, l.b.Lines, shortDuration(l.b.Window)))
	}
	clear(l.kinds)
	l.pools = [3]pool{}
	l.start = now
}
