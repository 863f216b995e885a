package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestLogVolumeUnderFloods: a hostile server floods the client with 20,000
// messages of one kind (junk lines, rewritten notifications, refused URL
// elicitations, sampling requests), each of which used to cost one log
// line. The log stays within the budget (20 lines of a kind a minute plus
// one summary line), `stats` still counts every event, and the session
// keeps serving.
func TestLogVolumeUnderFloods(t *testing.T) {
	t.Parallel()
	const count = 20_000
	kinds := &atOnce{t: t}
	for _, kind := range []string{"junk", "notify", "elicit_url", "sampling"} {
		kinds.Run(kind, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "mcpguard.log")
			p := startGuardedRaw(t, &guardOpts{Log: logFile}, testserverBin)
			p.initialize()
			p.sendWait(callLine(1, "spam", map[string]any{"count": count, "kind": kind}))
			m, _ := p.expect("1", 60*time.Second)
			var r struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Content) == 0 {
				t.Fatalf("spam reply: %s", truncate(string(m.raw), 300))
			}
			sent, err := strconv.Atoi(r.Content[0].Text)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.callOK(2, "echo", map[string]any{"text": "next"}); got != "next" {
				t.Errorf("next call: %q", got)
			}
			if _, err := p.closeAndWait(30 * time.Second); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(logFile)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d messages, %d bytes from the server, %d bytes of log (%.4f log bytes a byte)",
				kind, count, sent, fi.Size(), float64(fi.Size())/float64(sent))
			if fi.Size() > 24<<10 {
				t.Errorf("%d bytes of log for one flood, want at most 24 KiB", fi.Size())
			}
			out, status := runGuardCmd(t, "stats", "--json", logFile)
			var s struct {
				ByEvent map[string]int `json:"by_event"`
			}
			if err := json.Unmarshal([]byte(out), &s); status != 0 || err != nil {
				t.Fatalf("stats: %d %v: %s", status, err, out)
			}
			decisions := 0
			for ev, n := range s.ByEvent {
				if ev != "downstream_start" && ev != "downstream_exit" {
					decisions += n
				}
			}
			if decisions < count {
				t.Errorf("stats counts %d decisions (%v), want at least one per message: %d", decisions, s.ByEvent, count)
			}
		})
	}
	kinds.Wait()
}
