package eventlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Keys that stats groups rejections by (`--by`).
const (
	ByServer = "server"
	ByTool   = "tool"
	ByCode   = "code"
)

// Keys lists the --by keys in the order stats shows them.
var Keys = []string{ByServer, ByTool, ByCode}

// Stats counts a log for `mcpguard stats`: events by kind, rejections by
// server, tool and error code, and rejections per minute. Add it up with
// ReadFrom or Line, then write it with WriteText or WriteJSON.
type Stats struct {
	Since time.Time // events before it are not counted; zero for all

	Lines      int            // lines read
	Skipped    int            // malformed, foreign or over-long lines
	Events     int            // events counted (at or after Since)
	First      time.Time      // of the first event counted
	Last       time.Time      // of the last event counted
	ByEvent    map[string]int // events by kind
	Rejections int            // see Record.IsRejection
	By         map[string]map[string]int
	perMinute  map[int64]int // rejections by Unix minute

	dec Decoder
	rec Record
}

// NewStats returns an empty Stats counting events at or after since.
func NewStats(since time.Time) *Stats {
	s := &Stats{Since: since, ByEvent: make(map[string]int), By: make(map[string]map[string]int), perMinute: make(map[int64]int)}
	for _, k := range Keys {
		s.By[k] = make(map[string]int)
	}
	s.dec.Summary = true
	return s
}

// ReadFrom counts every line of r, including an unfinished last one.
func (s *Stats) ReadFrom(r io.Reader) (int64, error) {
	tooLong, err := eachLine(r, s.line)
	s.Skipped += tooLong
	s.Lines += tooLong
	return 0, err
}

// ReadLog counts every line of the log at path and of its rotated files
// (see ReadLog).
func (s *Stats) ReadLog(path string) error {
	tooLong, err := ReadLog(path, s.line)
	s.Skipped += tooLong
	s.Lines += tooLong
	return err
}

func (s *Stats) line(b []byte) error { s.Line(b); return nil }

// Line counts one log line.
func (s *Stats) Line(line []byte) {
	s.Lines++
	if s.dec.Decode(line, &s.rec) != nil {
		s.Skipped++
		return
	}
	s.Add(&s.rec)
}

// Add counts one record (a budget's summary line as the lines it stands
// for).
func (s *Stats) Add(r *Record) {
	if r.Time.Before(s.Since) {
		return
	}
	n := r.Weight()
	s.Events += n
	if s.First.IsZero() || r.Time.Before(s.First) {
		s.First = r.Time
	}
	if r.Time.After(s.Last) {
		s.Last = r.Time
	}
	s.ByEvent[string(r.Event)] += n
	if !r.IsRejection() {
		return
	}
	s.Rejections += n
	s.By[ByServer][r.Server] += n
	s.By[ByTool][r.Tool] += n
	s.By[ByCode][r.Code()] += n
	s.perMinute[floorDiv(r.Time.Unix(), 60)] += n
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Bucket is one bar of the chart.
type Bucket struct {
	Start      time.Time `json:"start"`
	Rejections int       `json:"rejections"`
}

// maxBuckets bounds the timeline; older buckets are left out.
const maxBuckets = 1000

// Timeline returns rejections per bucket from the first event to the
// last, empty buckets included: per minute up to 3 hours, per hour up to 7
// days, per day beyond (at most maxBuckets, the latest). Hours and days
// are those of loc.
func (s *Stats) Timeline(loc *time.Location) (time.Duration, []Bucket) {
	if s.Events == 0 {
		return time.Minute, nil
	}
	if loc == nil {
		loc = time.Local
	}
	span := s.Last.Sub(s.First)
	step := time.Minute
	switch {
	case span > 7*24*time.Hour:
		step = 24 * time.Hour
	case span > 3*time.Hour:
		step = time.Hour
	}
	floor := func(t time.Time) time.Time {
		t = t.In(loc)
		switch step {
		case time.Minute:
			return t.Truncate(time.Minute)
		case time.Hour:
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, loc)
		}
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	}
	next := func(t time.Time) time.Time {
		if step == 24*time.Hour {
			return t.AddDate(0, 0, 1)
		}
		return floor(t.Add(step))
	}
	first := floor(s.First)
	if oldest := floor(s.Last.Add(-(maxBuckets - 1) * step)); first.Before(oldest) {
		first = oldest // a log spanning centuries (a foreign clock) keeps the chart bounded
	}
	var out []Bucket
	index := make(map[int64]int)
	for t := first; !t.After(s.Last); t = next(t) {
		index[t.Unix()] = len(out)
		out = append(out, Bucket{Start: t})
	}
	for m, n := range s.perMinute {
		if i, ok := index[floor(time.Unix(m*60, 0)).Unix()]; ok {
			out[i].Rejections += n
		}
	}
	return step, out
}

// statsJSON is the --json shape.
type statsJSON struct {
	Lines      int                       `json:"lines"`
	Skipped    int                       `json:"skipped"`
	Events     int                       `json:"events"`
	First      *time.Time                `json:"first,omitempty"`
	Last       *time.Time                `json:"last,omitempty"`
	ByEvent    map[string]int            `json:"by_event"`
	Rejections int                       `json:"rejections"`
	By         map[string]map[string]int `json:"by"`
	Bucket     string                    `json:"bucket"`
	Timeline   []Bucket                  `json:"timeline"`
}

// WriteJSON writes the counts as one JSON object, with rejections by the
// given keys (all when by is empty).
func (s *Stats) WriteJSON(w io.Writer, by []string, loc *time.Location) error {
	if len(by) == 0 {
		by = Keys
	}
	step, timeline := s.Timeline(loc)
	out := statsJSON{Lines: s.Lines, Skipped: s.Skipped, Events: s.Events, ByEvent: s.ByEvent,
		Rejections: s.Rejections, By: make(map[string]map[string]int), Bucket: shortDuration(step), Timeline: timeline}
	if out.Timeline == nil {
		out.Timeline = []Bucket{}
	}
	if s.Events > 0 {
		first, last := s.First.In(orLocal(loc)), s.Last.In(orLocal(loc))
		out.First, out.Last = &first, &last
	}
	for _, k := range by {
		out.By[k] = s.By[k]
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func orLocal(loc *time.Location) *time.Location {
	if loc == nil {
		return time.Local
	}
	return loc
}

// Text layout.
const (
	barCells = 40 // the longest bar
	maxRows  = 20 // rows per --by table
)

// WriteText writes the counts and the chart for a terminal.
func (s *Stats) WriteText(w io.Writer, by []string, loc *time.Location) error {
	loc = orLocal(loc)
	if len(by) == 0 {
		by = Keys
	}
	var b strings.Builder
	const stamp = "2006-01-02 15:04:05"
	if s.Events == 0 {
		fmt.Fprintf(&b, "no events")
	} else {
		fmt.Fprintf(&b, "%d events from %s to %s (%s)", s.Events, s.First.In(loc).Format(stamp), s.Last.In(loc).Format(stamp), zoneName(s.Last.In(loc)))
	}
	fmt.Fprintf(&b, "; %d lines, %d skipped (malformed or not mcpguard events)\n", s.Lines, s.Skipped)
	if s.Events > 0 {
		kinds := top(s.ByEvent, 0)
		b.WriteString("  ")
		for i, c := range kinds {
			if i > 0 {
				b.WriteString("  ")
			}
			fmt.Fprintf(&b, "%s %d", orDash(c.Key), c.N)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%d rejections\n", s.Rejections)
	for _, k := range by {
		counts := top(s.By[k], 0)
		if len(counts) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\nrejections by %s\n", k)
		width := 0
		for _, c := range counts[:min(len(counts), maxRows)] {
			width = max(width, len(orDash(c.Key)))
		}
		for i, c := range counts {
			if i == maxRows {
				fmt.Fprintf(&b, "  … %d more\n", len(counts)-maxRows)
				break
			}
			row := fmt.Sprintf("  %-*s %7d  %s", width, orDash(c.Key), c.N, bar(c.N, counts[0].N))
			b.WriteString(strings.TrimRight(row, " "))
			b.WriteString("\n")
		}
	}
	step, timeline := s.Timeline(loc)
	if len(timeline) > 0 {
		layout, unit := "15:04", "minute"
		switch step {
		case time.Hour:
			layout, unit = "2006-01-02 15:00", "hour"
		case 24 * time.Hour:
			layout, unit = "2006-01-02", "day"
		}
		if step == time.Minute && s.First.In(loc).YearDay() != s.Last.In(loc).YearDay() {
			layout = "01-02 15:04"
		}
		most := 0
		for _, bk := range timeline {
			most = max(most, bk.Rejections)
		}
		fmt.Fprintf(&b, "\nrejections per %s (%s)\n", unit, zoneName(s.Last.In(loc)))
		for _, bk := range timeline {
			row := fmt.Sprintf("  %s %6d  %s", bk.Start.Format(layout), bk.Rejections, bar(bk.Rejections, most))
			b.WriteString(strings.TrimRight(row, " "))
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func zoneName(t time.Time) string {
	name, _ := t.Zone()
	if name == "" {
		return t.Format("-07:00")
	}
	return name
}

// bar draws n of most as up to barCells block characters, in eighths; any
// n > 0 shows at least a sliver.
func bar(n, most int) string {
	if n <= 0 || most <= 0 {
		return ""
	}
	eighths := n * barCells * 8 / most
	if eighths == 0 {
		eighths = 1
	}
	const partial = " ▏▎▍▌▋▊▉"
	s := strings.Repeat("█", eighths/8)
	if r := eighths % 8; r > 0 {
		s += string([]rune(partial)[r])
	}
	return s
}
