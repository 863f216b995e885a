package eventlog

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SpikeRule is `--spike N/WINDOW`: N rejections for one server within a
// sliding WINDOW.
type SpikeRule struct {
	N      int
	Window time.Duration
}

// ParseSpike parses "N/WINDOW", as in "5/1m" or "20/30s".
func ParseSpike(s string) (SpikeRule, error) {
	n, w, ok := strings.Cut(s, "/")
	if !ok {
		return SpikeRule{}, fmt.Errorf("spike %q: want N/WINDOW, as in 5/1m", s)
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 1 {
		return SpikeRule{}, fmt.Errorf("spike %q: N must be a positive integer", s)
	}
	window, err := time.ParseDuration(w)
	if err != nil || window <= 0 {
		return SpikeRule{}, fmt.Errorf("spike %q: WINDOW must be a positive duration, as in 30s, 1m, 1h", s)
	}
	return SpikeRule{N: count, Window: window}, nil
}

func (r SpikeRule) String() string { return strconv.Itoa(r.N) + "/" + shortDuration(r.Window) }

// An Alert says that a server's rejections reached the rule's threshold.
type Alert struct {
	Time   time.Time // of the rejection that reached the threshold
	Server string
	Rule   SpikeRule
	Count  int     // rejections in the window ending at Time
	Codes  []Count // the most frequent error codes in the window
	Tools  []Count // the most frequent tools in the window
}

// Count is a key and how often it was seen.
type Count struct {
	Key string
	N   int
}

// topN is how many codes and tools an alert names.
const topN = 3

// SpikeDetector watches rejections per server. It is driven by the events'
// own timestamps, never by the clock, so replaying a log gives the same
// alerts as watching it live.
//
// A rejection at time t is in the window ending at now when
// now-Window < t <= now: N rejections exactly Window apart are not a spike.
// A server alerts once when its window reaches N, and is re-armed when a
// later rejection finds fewer than N in its window: one alert per
// crossing, not one per line.
type SpikeDetector struct {
	rule    SpikeRule
	servers map[string]*spikeWindow
}

// NewSpikeDetector returns a detector for rule.
func NewSpikeDetector(rule SpikeRule) *SpikeDetector {
	return &SpikeDetector{rule: rule, servers: make(map[string]*spikeWindow)}
}

// spikeHit is one line's rejections: n is more than 1 for a budget's
// summary line (see Record.Weight).
type spikeHit struct {
	t          time.Time
	code, tool string
	n          int
}

type spikeWindow struct {
	hits     []spikeHit // oldest first
	count    int        // the hits' n added up
	latest   time.Time
	alerting bool
	codes    map[string]int
	tools    map[string]int
}

// Observe feeds one record and returns an alert when it is the rejection
// that takes its server's window to the threshold.
func (d *SpikeDetector) Observe(r *Record) (Alert, bool) {
	if !r.IsRejection() || r.Time.IsZero() {
		return Alert{}, false
	}
	w := d.servers[r.Server]
	if w == nil {
		w = &spikeWindow{codes: make(map[string]int), tools: make(map[string]int)}
		d.servers[r.Server] = w
	}
	if r.Time.After(w.latest) {
		w.latest = r.Time
	}
	start := w.latest.Add(-d.rule.Window) // the window is (start, latest]
	w.evict(start)
	if !r.Time.After(start) {
		return Alert{}, false // older than the window: lines from several processes arrive slightly out of order
	}
	w.insert(spikeHit{t: r.Time, code: r.Code(), tool: r.Tool, n: r.Weight()})
	if w.count < d.rule.N {
		w.alerting = false
		return Alert{}, false
	}
	if w.alerting {
		return Alert{}, false
	}
	w.alerting = true
	return Alert{Time: r.Time, Server: r.Server, Rule: d.rule, Count: w.count,
		Codes: top(w.codes, topN), Tools: top(w.tools, topN)}, true
}

func (w *spikeWindow) evict(start time.Time) {
	i := 0
	for i < len(w.hits) && !w.hits[i].t.After(start) {
		h := w.hits[i]
		decr(w.codes, h.code, h.n)
		decr(w.tools, h.tool, h.n)
		w.count -= h.n
		i++
	}
	if i > 0 {
		w.hits = append(w.hits[:0], w.hits[i:]...)
	}
}

// insert keeps hits in time order; lines are nearly ordered, so the
// search from the end is short.
func (w *spikeWindow) insert(h spikeHit) {
	i := len(w.hits)
	for i > 0 && w.hits[i-1].t.After(h.t) {
		i--
	}
	w.hits = append(w.hits, spikeHit{})
	copy(w.hits[i+1:], w.hits[i:])
	w.hits[i] = h
	w.codes[h.code] += h.n
	w.tools[h.tool] += h.n
	w.count += h.n
}

func decr(m map[string]int, k string, n int) {
	if m[k] <= n {
		delete(m, k)
	} else {
		m[k] -= n
	}
}

// top returns the n most frequent keys, ties in key order.
func top(m map[string]int, n int) []Count {
	out := make([]Count, 0, len(m))
	for k, c := range m {
		out = append(out, Count{k, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Key < out[j].Key
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// shortDuration writes 1m rather than 1m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
