package urlcheck

import (
	"bufio"
	"io"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// A reader is a real URL parser in another runtime, asked one URL per line:
// Node's WHATWG URL (what a Node fetch server reads) or Python's urllib
// (what mcp-server-fetch's httpx and urllib callers read).
type reader struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// reading is what a reader made of one URL: ok false when it refused it.
type reading struct {
	OK       bool   `json:"ok"`
	Scheme   string `json:"scheme"`
	Hostname string `json:"hostname"`
}

// nodeScript reads JSON strings, one a line, and answers with what
// new URL() makes of each.
const nodeScript = `
const rl = require('readline').createInterface({input: process.stdin});
rl.on('line', (line) => {
  let out = {ok: false};
  try {
    const u = new URL(JSON.parse(line));
    out = {ok: true, scheme: u.protocol.replace(/:$/, ''), hostname: u.hostname};
  } catch (e) {}
  process.stdout.write(JSON.stringify(out) + '\n');
});
`

// pythonScript answers with urllib.parse.urlsplit's hostname as the
// socket layer would look it up: IDNA 2003 for a non-ASCII name (the
// "idna" codec), inet_aton's reading of a numeric IPv4 host.
const pythonScript = `
import sys, json, socket, ipaddress
from urllib.parse import urlsplit
for line in sys.stdin:
    out = {"ok": False}
    try:
        u = urlsplit(json.loads(line))
        h = u.hostname
        u.port
        if h is None or h == "":
            raise ValueError("no host")
        if ":" in h:
            h = str(ipaddress.IPv6Address(h))
        else:
            if not h.isascii():
                h = h.encode("idna").decode("ascii").lower()
            h = h.rstrip(".") if h.endswith(".") and not h.endswith("..") else h
            try:
                h = socket.inet_ntoa(socket.inet_aton(h))
            except OSError:
                pass
        out = {"ok": True, "scheme": u.scheme, "hostname": h}
    except Exception:
        pass
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
`

func startReader(t testing.TB, name string, args ...string) *reader {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is needed for the differential test: %v", name, err)
	}
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &reader{cmd: cmd, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	return r
}

func startNode(t testing.TB) *reader { return startReader(t, "node", "-e", nodeScript) }

func startPython(t testing.TB) *reader { return startReader(t, "python3", "-c", pythonScript) }

func (r *reader) read(t testing.TB, raw string) reading {
	r.mu.Lock()
	defer r.mu.Unlock()
	line, err := json.Marshal(raw)
	if err != nil {
		// Invalid UTF-8: the readers would see U+FFFD; Parse refuses it.
		return reading{}
	}
	if _, err := r.in.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		line []byte
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		b, err := r.out.ReadBytes('\n')
		done <- answer{b, err}
	}()
	var ans []byte
	select {
	case a := <-done:
		if a.err != nil {
			t.Fatal(a.err)
		}
		ans = a.line
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer from %s for %q", r.cmd.Path, raw)
	}
	var out reading
	if err := json.Unmarshal(ans, &out); err != nil {
		t.Fatalf("reader answer %q: %v", ans, err)
	}
	return out
}

// sameHost reports whether a reader's hostname names the host Parse read:
// the same address for IP literals in any spelling, the same name (without
// one trailing dot) otherwise.
func sameHost(u *URL, hostname string) bool {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(hostname, "]"), "["), ".")
	if u.Addr.IsValid() {
		a, err := netip.ParseAddr(h)
		return err == nil && a == u.Addr
	}
	return strings.ToLower(h) == u.Host
}
