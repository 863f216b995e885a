package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRelaybenchRuns keeps the benchmark command from rotting: a short run
// over all three paths must verify every reply and report positive figures.
func TestRelaybenchRuns(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "relaybench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-n", "300", "-big", "1", "-rounds", "1", "-json").Output()
	if err != nil {
		t.Fatalf("relaybench: %v\n%s", err, out)
	}
	var res []Result
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 3 {
		t.Fatalf("output %s: %v", out, err)
	}
	for _, r := range res {
		if r.P50us <= 0 || r.P99us < r.P50us || r.MsgsPerSec <= 0 || r.BigMBps <= 0 {
			t.Errorf("%s: implausible figures %+v", r.Path, r)
		}
		if r.Path != "direct" && r.MiddleRSS <= 0 {
			t.Errorf("%s: no peak RSS", r.Path)
		}
	}
}
