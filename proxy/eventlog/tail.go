package eventlog

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrSpike is returned by Tail.Line when ExitOnSpike is set and an alert
// was written.
var ErrSpike = errors.New("eventlog: rejection spike")

// Tail turns log lines into one readable line per event, for
// `mcpguard tail`. Every string it shows is canonicalised again: the file
// may have been written by something other than mcpguard.
type Tail struct {
	W           io.Writer
	Server      string         // only this server; "" for all
	Since       time.Time      // only events at or after; zero for all
	All         bool           // every event, not only decisions and starts and exits
	Spikes      *SpikeDetector // nil: no alerts
	ExitOnSpike bool
	Color       bool
	Location    *time.Location // times are shown in it; time.Local when nil

	// Skipped counts lines that are malformed or not mcpguard events.
	Skipped int
	// Alerts counts the alerts written.
	Alerts int

	dec Decoder
	rec Record
	buf []byte
}

// Line handles one log line. It returns the error from writing, or
// ErrSpike.
func (t *Tail) Line(line []byte) error {
	if err := t.dec.Decode(line, &t.rec); err != nil {
		t.Skipped++
		return nil
	}
	r := &t.rec
	if t.Server != "" && r.Server != t.Server || r.Time.Before(t.Since) {
		return nil
	}
	if t.All || shown(r) {
		t.buf = t.Format(t.buf[:0], r)
		t.buf = append(t.buf, '\n')
		if _, err := t.W.Write(t.buf); err != nil {
			return err
		}
	}
	if t.Spikes == nil {
		return nil
	}
	a, ok := t.Spikes.Observe(r)
	if !ok {
		return nil
	}
	t.Alerts++
	t.buf = t.FormatAlert(t.buf[:0], a)
	t.buf = append(t.buf, '\n')
	if _, err := t.W.Write(t.buf); err != nil {
		return err
	}
	if t.ExitOnSpike {
		return ErrSpike
	}
	return nil
}

// ReadFile feeds every line of the log at path to Line, its rotated
// files first (see ReadLog), and counts the lines too long to read in
// Skipped. It returns Line's first error.
func (t *Tail) ReadFile(path string) error {
	tooLong, err := ReadLog(path, t.Line)
	t.Skipped += tooLong
	return err
}

// shown reports whether tail shows r without --all: the decisions, and
// the server's start and exit.
func shown(r *Record) bool {
	switch r.Event {
	case EventRejected, EventAudited, EventMalformed, EventDropped, EventRewritten, EventLimit, EventStart, EventExit, EventWarning, EventReload:
		return true
	}
	return r.Action != ActionNone
}

// ANSI SGR colours, only when Color is set.
const (
	sgrReset   = "\x1b[0m"
	sgrDim     = "\x1b[2m"
	sgrBold    = "\x1b[1m"
	sgrRed     = "\x1b[31m"
	sgrGreen   = "\x1b[32m"
	sgrYellow  = "\x1b[33m"
	sgrMagenta = "\x1b[35m"
	sgrCyan    = "\x1b[36m"
	sgrAlert   = "\x1b[1;97;41m"
)

func kindColor(r *Record) string {
	switch {
	case r.IsRejection():
		return sgrRed
	case r.Event == EventAudited || r.Event == EventWarning:
		return sgrYellow
	case r.Event == EventRewritten:
		return sgrCyan
	case r.Event == EventDropped || r.Event == EventFailed:
		return sgrMagenta
	case r.Event == EventStart || r.Event == EventExit:
		return sgrGreen
	}
	return ""
}

// messageRunes is how much of a message a tail line shows.
const messageRunes = 100

// Format appends r's readable line to b:
//
//	2026-07-01 10:04:05.123 filesystem rejected tools/call read_file INPUT_REJECTED_PATH_SCOPE field=path rule=ingress[2] "rejected MCP input path: ..."
func (t *Tail) Format(b []byte, r *Record) []byte {
	b = t.paint(b, sgrDim, t.stamp(r.Time))
	b = append(b, ' ')
	b = t.paint(b, sgrBold, orDash(r.Server))
	b = append(b, ' ')
	kind := string(r.Event)
	if r.Action != ActionNone && string(r.Action) != kind {
		kind += "/" + string(r.Action)
	}
	b = t.paint(b, kindColor(r), Clean(kind))
	if r.Method != "" || r.Tool != "" {
		b = append(b, ' ')
		b = append(b, Clean(r.Method)...)
		if r.Tool != "" {
			if r.Method != "" {
				b = append(b, ' ')
			}
			b = append(b, Clean(r.Tool)...)
		}
	}
	if r.ErrorCode != "" {
		b = append(b, ' ')
		b = t.paint(b, kindColor(r), Clean(r.ErrorCode))
	}
	b = field(b, "field", r.Field)
	b = field(b, "rule", r.Rule)
	switch r.Event {
	case EventStart:
		if r.ChildPID != 0 {
			b = append(b, " child_pid="...)
			b = strconv.AppendInt(b, int64(r.ChildPID), 10)
		}
		b = field(b, "mode", r.Mode)
	case EventExit:
		if r.Status >= 0 {
			b = append(b, " status="...)
			b = strconv.AppendInt(b, int64(r.Status), 10)
		}
		b = append(b, " after "...)
		b = append(b, r.Duration.Round(time.Millisecond).String()...)
	case EventRewritten:
		b = field(b, "canonicaliser", r.Canonicaliser)
		if r.BytesRemoved > 0 {
			b = append(b, " bytes_removed="...)
			b = strconv.AppendInt(b, int64(r.BytesRemoved), 10)
		}
	}
	if r.Suppressed > 0 {
		b = append(b, " suppressed="...)
		b = strconv.AppendInt(b, int64(r.Suppressed), 10)
	}
	if r.ValueLen >= 0 {
		b = append(b, " value_len="...)
		b = strconv.AppendInt(b, int64(r.ValueLen), 10)
		b = field(b, "sha256", r.ValueSHA256)
	}
	if r.Message != "" {
		b = append(b, ' ')
		msg := Clean(r.Message)
		if r.Event == EventRejected || r.Event == EventAudited {
			// A verdict's message is the policy's text around peer text
			// the policy canonicalised (its backticks became '): the
			// backticks left are the policy's (a pattern) and are shown as
			// written. Other messages may quote a peer as it came.
			msg = cleanKeepingBackticks(r.Message, MaxMessageBytes)
		}
		b = t.paint(b, sgrDim, strconv.Quote(shorten(msg, messageRunes)))
	}
	return b
}

// FormatAlert appends an alert line to b:
//
//	ALERT 2026-07-01 10:04:05.123 filesystem: 5 rejections within 1m (spike 5/1m); codes: INPUT_REJECTED_PATH_SCOPE 4, ...; tools: read_file 4, ...
func (t *Tail) FormatAlert(b []byte, a Alert) []byte {
	b = t.paint(b, sgrAlert, "ALERT")
	b = append(b, ' ')
	b = append(b, t.stamp(a.Time)...)
	b = append(b, ' ')
	b = t.paint(b, sgrBold, orDash(a.Server))
	b = fmt.Appendf(b, ": %d rejections within %s (spike %s); codes: ", a.Count, shortDuration(a.Rule.Window), a.Rule)
	b = appendCounts(b, a.Codes, a.Count)
	b = append(b, "; tools: "...)
	return appendCounts(b, a.Tools, a.Count)
}

// appendCounts writes the counts an alert names and, when the window
// held more keys than it names, "+N more" with the rejections of the rest,
// so the numbers add up to the alert's count.
func appendCounts(b []byte, cs []Count, total int) []byte {
	named := 0
	for i, c := range cs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, orDash(c.Key)...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(c.N), 10)
		named += c.N
	}
	if rest := total - named; rest > 0 {
		if len(cs) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "+"...)
		b = strconv.AppendInt(b, int64(rest), 10)
		b = append(b, " more"...)
	}
	return b
}

func (t *Tail) stamp(tm time.Time) string {
	loc := t.Location
	if loc == nil {
		loc = time.Local
	}
	return tm.In(loc).Format("2006-01-02 15:04:05.000")
}

func (t *Tail) paint(b []byte, sgr, s string) []byte {
	if !t.Color || sgr == "" {
		return append(b, s...)
	}
	b = append(b, sgr...)
	b = append(b, s...)
	return append(b, sgrReset...)
}

func field(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, '=')
	return append(b, Clean(v)...)
}

// orDash canonicalises s, and shows "-" for an empty string.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return Clean(s)
}

// shorten cuts s to at most n runes, marking the cut with "…". It cuts
// at the last space before the limit, so no word is cut in half, unless
// that would drop more than a third of what fits (one very long word).
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	lastSpace, spaceRunes := -1, 0
	for k < n-1 {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == ' ' {
			lastSpace, spaceRunes = i, k
		}
		i += size
		k++
	}
	if next, _ := utf8.DecodeRuneInString(s[i:]); next == ' ' {
		return s[:i] + "…" // the cut falls between words
	}
	if lastSpace > 0 && spaceRunes >= (n-1)*2/3 {
		return strings.TrimRight(s[:lastSpace], " ,;:") + " …"
	}
	return s[:i] + "…"
}

// ParseSince parses --since: a duration before now (90s, 15m, 2h, 3d) or
// a time (RFC 3339, or 2006-01-02 15:04[:05] or 2006-01-02 in loc).
func ParseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (15m, 2h, 3d) or a time (2006-01-02T15:04:05Z07:00, 2006-01-02 15:04)", s)
}
