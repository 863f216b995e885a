package eventlog

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)

func rejection(server string, at time.Duration, code, tool string) *Record {
	return &Record{Time: t0.Add(at), Server: server, Event: EventRejected, Action: ActionRejected, ErrorCode: code, Tool: tool}
}

// alertsAt feeds recs and returns the index of each record that alerted.
func alertsAt(d *SpikeDetector, recs []*Record) (idx []int, alerts []Alert) {
	for i, r := range recs {
		if a, ok := d.Observe(r); ok {
			idx = append(idx, i)
			alerts = append(alerts, a)
		}
	}
	return idx, alerts
}

func TestParseSpike(t *testing.T) {
	if r, err := ParseSpike("5/1m"); err != nil || r.N != 5 || r.Window != time.Minute || r.String() != "5/1m" {
		t.Errorf("5/1m: %+v %v", r, err)
	}
	if r, _ := ParseSpike("20/1h30m"); r.String() != "20/1h30m" {
		t.Errorf("String %q", r.String())
	}
	for _, bad := range []string{"", "5", "0/1m", "-1/1m", "x/1m", "5/", "5/0s", "5/-1m", "5/1 minute"} {
		if _, err := ParseSpike(bad); err == nil {
			t.Errorf("ParseSpike(%q) accepted", bad)
		}
	}
}

func TestSpikeWindows(t *testing.T) {
	const c, tool = "INPUT_REJECTED_PATH_SCOPE", "read_file"
	spread := func(server string, n int, step time.Duration) []*Record {
		var out []*Record
		for i := range n {
			out = append(out, rejection(server, time.Duration(i)*step, c, tool))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		recs []*Record
		want []int
	}{
		{"exactly N within the window", spread("fs", 5, 14999*time.Millisecond), []int{4}}, // span 59.996s
		{"N at the same instant", spread("fs", 5, 0), []int{4}},
		{"N spanning exactly the window", spread("fs", 5, 15*time.Second), nil}, // span 60s: the first has left
		{"N spread just over the window", spread("fs", 5, 15001*time.Millisecond), nil},
		{"N-1", spread("fs", 4, time.Second), nil},
		{"a steady stream alerts once", spread("fs", 50, 10*time.Second), []int{4}},
		{"again after the window empties", append(spread("fs", 5, time.Second),
			rejection("fs", 10*time.Minute, c, tool), rejection("fs", 10*time.Minute+1, c, tool),
			rejection("fs", 10*time.Minute+2, c, tool), rejection("fs", 10*time.Minute+3, c, tool),
			rejection("fs", 10*time.Minute+4, c, tool)), []int{4, 9}},
		{"servers are counted apart", []*Record{
			rejection("a", 0, c, tool), rejection("b", 1, c, tool), rejection("a", 2, c, tool), rejection("b", 3, c, tool),
			rejection("a", 4, c, tool), rejection("b", 5, c, tool), rejection("a", 6, c, tool), rejection("b", 7, c, tool),
			rejection("c", 8, c, tool), rejection("a", 9, c, tool), rejection("c", 10, c, tool), rejection("b", 11, c, tool),
		}, []int{9, 11}},
		{"other events do not count", []*Record{
			rejection("fs", 0, c, tool), rejection("fs", 1, c, tool), rejection("fs", 2, c, tool), rejection("fs", 3, c, tool),
			{Time: t0.Add(4), Server: "fs", Event: EventAudited, Action: ActionAudited},
			{Time: t0.Add(5), Server: "fs", Event: EventRewritten, Action: ActionRewritten},
			{Time: t0.Add(6), Server: "fs", Event: EventMalformed, Action: ActionRejected},
		}, []int{6}},
		{"out of order within the window counts", []*Record{
			rejection("fs", 30*time.Second, c, tool), rejection("fs", 10*time.Second, c, tool),
			rejection("fs", 31*time.Second, c, tool), rejection("fs", 11*time.Second, c, tool),
			rejection("fs", 12*time.Second, c, tool),
		}, []int{4}},
		{"a line older than the window is ignored", []*Record{
			rejection("fs", 2*time.Minute, c, tool), rejection("fs", 0, c, tool), rejection("fs", 0, c, tool),
			rejection("fs", 0, c, tool), rejection("fs", 0, c, tool),
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := alertsAt(NewSpikeDetector(SpikeRule{N: 5, Window: time.Minute}), tc.recs)
			if !slices.Equal(got, tc.want) {
				t.Errorf("alerts at %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSpikeAlertNamesTopCodesAndTools(t *testing.T) {
	recs := []*Record{
		rejection("fs", 0, "PATH", "read_file"),
		rejection("fs", 1*time.Second, "PATH", "read_file"),
		rejection("fs", 2*time.Second, "SHELL", "run"),
		rejection("fs", 3*time.Second, "PATH", "write_file"),
		rejection("fs", 4*time.Second, "FLAG", ""), // no tool: a malformed message
		rejection("fs", 5*time.Second, "OTHER", "x"),
	}
	_, alerts := alertsAt(NewSpikeDetector(SpikeRule{N: 6, Window: time.Minute}), recs)
	if len(alerts) != 1 {
		t.Fatalf("alerts %+v", alerts)
	}
	a := alerts[0]
	if a.Server != "fs" || a.Count != 6 || !a.Time.Equal(t0.Add(5*time.Second)) {
		t.Errorf("alert %+v", a)
	}
	// The lists name the top three and count the rest, so they add up
	// to the alert's six rejections.
	if got := fmtCounts(a.Codes, a.Count); got != "PATH 3, FLAG 1, OTHER 1, +1 more" {
		t.Errorf("codes %s", got)
	}
	if got := fmtCounts(a.Tools, a.Count); got != "read_file 2, - 1, run 1, +2 more" {
		t.Errorf("tools %s", got)
	}
	if got := fmtCounts([]Count{{"PATH", 2}}, 2); got != "PATH 2" {
		t.Errorf("all named: %s", got)
	}
}

func fmtCounts(cs []Count, total int) string { return string(appendCounts(nil, cs, total)) }
