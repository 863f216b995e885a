package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/rs/zerolog"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// DefaultToolsListTimeout bounds how long a call waits while mcpguard
// lists the server's tools for it.
const DefaultToolsListTimeout = 5 * time.Second

const (
	// maxHeldCalls bounds the calls waiting for the tools list (each
	// holds a copy of its line); past it a call is judged at once.
	maxHeldCalls = 64
	// maxToolsPages bounds the pages one listing follows, against a
	// server whose cursors never end.
	maxToolsPages = 100
)

// toolsFetch lists the server's tools on behalf of calls that
// server_schema: enforce cannot judge yet (the client called a tool
// without listing the tools first, as a client that remembers them from an
// earlier connection does). It holds those calls, asks the server for
// tools/list itself, every page, and has them judged when the last page
// has arrived, or refused when the listing fails or takes longer than the
// timeout: nothing waits forever.
//
// Its requests use string ids made of a fixed prefix and 128 random bits
// drawn at start, which the agent never sees: an agent's id cannot collide
// with them except by guessing, and their answers are consumed here, never
// relayed.
type toolsFetch struct {
	r       *relay
	prefix  string
	timeout time.Duration

	mu      sync.Mutex
	running bool
	gen     int    // the listing in progress, so a stale timer does nothing
	seq     int    // numbers the page requests
	waitID  string // the id of the page request in flight
	pages   int
	held    []heldCall
	timer   *time.Timer
}

// heldCall is a tools/call waiting for the tools list: its id is reserved
// in the in-flight table, its line kept to be judged later.
type heldCall struct {
	key message.Key
	raw []byte
}

func newToolsFetch(r *relay, timeout time.Duration) *toolsFetch {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	return &toolsFetch{r: r, prefix: "mcpguard-tools-list-" + hex.EncodeToString(nonce[:]) + "-", timeout: timeout}
}

// hold keeps a call (already in the in-flight table under key) until the
// tools are listed, starting a listing if none is running. It returns
// false when too many calls wait already: the caller judges it now.
func (t *toolsFetch) hold(key message.Key, raw []byte) bool {
	t.mu.Lock()
	if len(t.held) >= maxHeldCalls {
		t.mu.Unlock()
		return false
	}
	t.held = append(t.held, heldCall{key: key, raw: append([]byte(nil), raw...)})
	if t.running {
		t.mu.Unlock()
		return true
	}
	t.running, t.pages = true, 0
	t.gen++
	gen := t.gen
	t.timer = time.AfterFunc(t.timeout, func() {
		t.r.turns.do(func() { t.finish(gen, "the MCP server did not list its tools within "+t.timeout.String()) })
	})
	line := t.pageRequest("")
	t.mu.Unlock()
	t.send(gen, line)
	return true
}

// send writes one of mcpguard's requests to the server through its
// queue (relay.queueToServer): the egress loop must never block on the
// server's input (the server may be blocked writing output that only it
// reads). t.mu is not held.
func (t *toolsFetch) send(gen int, line []byte) {
	if err := t.r.queueToServer(line); err != nil {
		t.finish(gen, err.Error())
	}
}

// pageRequest is the tools/list request for the page at cursor. t.mu is held.
func (t *toolsFetch) pageRequest(cursor string) []byte {
	t.seq++
	t.pages++
	t.waitID = t.prefix + strconv.Itoa(t.seq)
	req := struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      string         `json:"id"`
		Method  string         `json:"method"`
		Params  map[string]any `json:"params,omitempty"`
	}{JSONRPC: "2.0", ID: t.waitID, Method: "tools/list"}
	if cursor != "" {
		req.Params = map[string]any{"cursor": cursor}
	}
	b, _ := json.Marshal(req)
	return b
}

// owns reports whether a response from the server, whose id has the key
// k, answers one of mcpguard's own tools/list requests (the one in flight
// or an earlier, abandoned one): it is consumed, not relayed.
func (t *toolsFetch) owns(k message.Key) bool {
	return k.IsString && strings.HasPrefix(k.Str, t.prefix)
}

// answer takes the server's response to one of mcpguard's requests.
func (t *toolsFetch) answer(m *message.Message) {
	t.mu.Lock()
	if !t.running || message.KeyOf(m.ID).Str != t.waitID {
		t.mu.Unlock()
		return // an answer to a listing that timed out
	}
	gen := t.gen
	cursor, err := t.r.session.LearnTools(m)
	switch {
	case err != nil:
		t.mu.Unlock()
		t.finish(gen, "the MCP server's tools/list failed")
	case cursor != "" && t.pages < maxToolsPages:
		line := t.pageRequest(cursor)
		t.mu.Unlock()
		t.send(gen, line)
	default:
		t.mu.Unlock()
		t.finish(gen, "")
	}
}

// finish ends listing gen and has every held call judged; failure is
// why the listing failed, "" when it completed.
func (t *toolsFetch) finish(gen int, failure string) {
	t.mu.Lock()
	if !t.running || t.gen != gen {
		t.mu.Unlock()
		return
	}
	held := t.held
	t.held, t.running, t.waitID = nil, false, ""
	t.timer.Stop()
	t.mu.Unlock()
	if failure != "" {
		t.r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventFailed, Direction: eventlog.Egress,
			Method: "tools/list", Message: failure + "; calls that need the server's input schema are refused"})
	}
	for _, h := range held {
		t.r.judgeHeld(h)
	}
}

// stop abandons a listing in progress at the end of a run.
func (t *toolsFetch) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
	t.running = false
}
