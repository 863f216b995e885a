package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpguard/mcpguard/integration/internal/builds"
)

// TestBenchRuns keeps the benchmark from rotting: a short run builds
// mcpguard as the driver does, measures all three paths, verifies every
// reply and reports positive figures.
func TestBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the benchmark")
	}
	// The directory integration's tests build in: go build links the
	// bench and mcpguard again only when their sources changed.
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := builds.Dir(filepath.Dir(strings.TrimSpace(string(gomod))))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-n", "2000", "-big", "2", "-rounds", "1", "-json", "-build-dir", dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.Bytes())
	}
	var rep Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	want := []string{"direct", "relay", "mcpguard"}
	if len(rep.Results) != len(want) {
		t.Fatalf("got %d paths, want %v", len(rep.Results), want)
	}
	for i, r := range rep.Results {
		if r.Path != want[i] {
			t.Errorf("path %d is %q, want %q", i, r.Path, want[i])
		}
		// handshake 2 + warm-up 200 + 2000 + 2000 pipelined + 1 + 2 large
		if r.Expected != 4205 || r.Verified != r.Expected {
			t.Errorf("%s: verified %d of %d replies, want all of 4205", r.Path, r.Verified, r.Expected)
		}
		if r.P50us <= 0 || r.P90us < r.P50us || r.P99us < r.P90us || r.MsgsPerSec <= 0 || r.BigMBps <= 0 || r.BigLine <= 16<<20 {
			t.Errorf("%s: implausible figures %+v", r.Path, r.Figures)
		}
		if r.Path != "direct" && (r.PeakRSSKiB <= 0 || r.CPUusPerMsg <= 0) {
			t.Errorf("%s: no peak RSS or CPU of the middle process: %+v", r.Path, r.Figures)
		}
	}
	if len(rep.Ratios) == 0 {
		t.Error("no ratios")
	}
	for _, x := range rep.Ratios {
		if x.Value <= 0 {
			t.Errorf("ratio %s = %v", x.Name, x.Value)
		}
	}
	testStarts(t, bin, filepath.Join(dir, "mcpguard"))
}

// testStarts keeps the start-up measurement from rotting: two starts of
// each path with the mcpguard the rounds built, with a shipped policy
// file and a server that takes a while to start, every figure present and
// plausible.
func testStarts(t *testing.T, bench, mcpguard string) {
	var stderr bytes.Buffer
	pol := filepath.Join("..", "..", "policies", "filesystem.yaml")
	cmd := exec.Command(bench, "-starts", "2", "-json", "-mcpguard", mcpguard, "-policy", pol, "-server-start", "20ms")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench -starts: %v\n%s", err, stderr.Bytes())
	}
	var rep Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	if rep.Config.Policy != pol || rep.Config.ServerStart != 20*time.Millisecond {
		t.Errorf("config %+v: want policy %s, server start 20ms", rep.Config, pol)
	}
	want := []string{"direct", "relay", "mcpguard"}
	if len(rep.Starts) != len(want) || len(rep.Results) != 0 {
		t.Fatalf("got %d start results and %d round results, want %v and none", len(rep.Starts), len(rep.Results), want)
	}
	for i, r := range rep.Starts {
		if r.Path != want[i] || len(r.Starts) != 2 {
			t.Errorf("start result %d is %q with %d starts, want %q with 2", i, r.Path, len(r.Starts), want[i])
		}
		if r.MinFirstAnswerMs < 20 || r.MinFirstAnswerMs > r.FirstAnswerMs { // the server alone takes 20 ms
			t.Errorf("%s: implausible times %+v", r.Path, r.StartFigures)
		}
		if r.Path == "direct" {
			continue
		}
		for _, f := range r.Starts {
			if f.CPUms <= 0 || f.AnonKiB <= 0 || f.FileKiB <= 0 || f.RSSKiB != f.AnonKiB+f.FileKiB {
				t.Errorf("%s: implausible CPU or memory %+v", r.Path, f)
			}
		}
	}
	if len(rep.Ratios) != 2 {
		t.Errorf("got ratios %+v, want the first answer's and the idle RSS's", rep.Ratios)
	}
}

// TestVerifiers checks that the reply checks accept the server's bytes and
// a re-encoding of them, and refuse a wrong id or wrong content.
func TestVerifiers(t *testing.T) {
	good := echoReply(nil, 7)
	if got, err := checkEcho(good); err != nil || got != 7 {
		t.Errorf("server's reply: id %d, %v", got, err)
	}
	text := string(echoText(nil, 7))
	reordered := `{"result":{"content":[{"text":"` + text + `","type":"text"}]}, "id":7,"jsonrpc":"2.0"}`
	if got, err := checkEcho([]byte(reordered)); err != nil || got != 7 {
		t.Errorf("re-encoded reply: id %d, %v", got, err)
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + string(echoText(nil, 8)) + `"}]}}`, // another call's text
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + text[:100] + `"}]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`,
		`not json`,
	} {
		if _, err := checkEcho([]byte(bad)); err == nil {
			t.Errorf("checkEcho accepted %.80q", bad)
		}
	}

	b := newBench(Config{BigBytes: 1000})
	var blob bytes.Buffer
	w := bufio.NewWriter(&blob)
	answer(w, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"blob","arguments":{"bytes":1000}}}`), map[int][]byte{})
	w.Flush()
	if err := b.checkBlob(blob.Bytes(), 3); err != nil {
		t.Errorf("server's blob: %v", err)
	}
	if err := b.checkBlob(blob.Bytes(), 4); err == nil {
		t.Error("checkBlob accepted a reply for another id")
	}
	short := bytes.Replace(blob.Bytes(), []byte(`\n`), []byte(`\t`), 1)
	if err := b.checkBlob(short, 3); err == nil {
		t.Error("checkBlob accepted changed content")
	}
	var res struct {
		Result struct{ Content []struct{ Text string } }
	}
	if err := json.Unmarshal(blob.Bytes(), &res); err != nil || len(res.Result.Content[0].Text) != 1000 ||
		strings.Count(res.Result.Content[0].Text, "\n") != 1000/80 {
		t.Errorf("blob of 1000 bytes decodes to %d bytes (%v)", len(res.Result.Content[0].Text), err)
	}
}
