// Package eventlog owns mcpguard's decision log: one JSON object per line,
// appended by every mcpguard process that shares the file, read back by
// `mcpguard tail` and `mcpguard stats`.
//
// The log is for operators watching for prompt injection, so it must never
// become an injection channel itself: a caller's value is never written
// (only its length and a short hash), and every other string that came from
// the agent or the server is canonicalised before it is written.
package eventlog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Kind is what a log line reports, as written in its "event" field.
type Kind string

// The kinds of log lines.
const (
	EventStart     Kind = "downstream_start"
	EventExit      Kind = "downstream_exit"
	EventRejected  Kind = "rejected"
	EventAudited   Kind = "audited"
	EventMalformed Kind = "malformed"
	EventRewritten Kind = "rewritten"
	EventDropped   Kind = "dropped"
	EventFailed    Kind = "failed"
	EventLimit     Kind = "limit"
	EventWarning   Kind = "warning" // the policy and the server disagree (a path_scope root that does not exist, ...)
	EventPin       Kind = "pin"     // a pin or lint decision on what the server shows the model
	EventReload    Kind = "reload"  // the policy read again on SIGHUP: put in force, or refused and the old one kept
	// EventServerRequest is a request of the server's to the client
	// (sampling, elicitation, roots) that the policy allowed.
	EventServerRequest Kind = "server_request"
	// EventApproval is a call held for the user's approval (action:
	// ask): asked, or allowed by the user; a denial is EventRejected.
	EventApproval Kind = "approval"
	// EventLabel: the agent session now holds a label (private,
	// untrusted) that flows: rules judge, and the event that set it.
	EventLabel Kind = "label"
)

// Action is what mcpguard did with a message, as written in the "action"
// field.
type Action string

// The actions.
const (
	ActionRejected  Action = "rejected"
	ActionAudited   Action = "audited"
	ActionRewritten Action = "rewritten"
	ActionDropped   Action = "dropped"
	ActionWithheld  Action = "withheld" // an item removed from its list, its calls refused
	ActionAllowed   Action = "allowed"  // a server request relayed under server_requests; a held call the user allowed
	ActionAsked     Action = "asked"    // a call held while the user is asked
	ActionNone      Action = ""
)

// Directions, as written in the "direction" field.
const (
	Ingress = "ingress" // agent to server
	Egress  = "egress"  // server to agent
)

func init() {
	// Spike windows and per-minute stats need sub-second order.
	zerolog.TimeFieldFormat = time.RFC3339Nano
}

// DefaultPath is $XDG_STATE_HOME/mcpguard/mcpguard.log, else
// ~/.local/state/mcpguard/mcpguard.log.
func DefaultPath() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "mcpguard", "mcpguard.log")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".local", "state", "mcpguard", "mcpguard.log")
}

// Open opens path for appending ("-" means stderr), creating it and its
// directory with private permissions: the log reveals which tools an agent
// uses. Each zerolog event is one write(2) on an O_APPEND file, so lines
// from several processes never interleave; the file is rotated by rename
// under rot, by whichever of those processes finds it full (see rotating).
func Open(path string, rot Rotation, stderr io.Writer) (io.Writer, func() error, error) {
	if path == "-" {
		return stderr, func() error { return nil }, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	r, err := openRotating(path, rot)
	if err != nil {
		return nil, nil, err
	}
	return &keepServing{w: r, stderr: stderr, path: path}, r.Close, nil
}

// keepServing lets the proxy go on when the log cannot be written (disk
// full, file removed with its directory): the failure is said once on
// stderr and later lines are dropped.
type keepServing struct {
	w      io.Writer
	stderr io.Writer
	path   string
	once   sync.Once
}

func (k *keepServing) Write(p []byte) (int, error) {
	if _, err := k.w.Write(p); err != nil {
		k.once.Do(func() {
			fmt.Fprintf(k.stderr, "mcpguard: cannot write log %s: %v; decisions are no longer logged\n", k.path, err)
		})
	}
	return len(p), nil
}

// Logger writes decision events with the fields every line carries,
// within a Budget.
type Logger struct {
	z   zerolog.Logger
	lim *limiter // nil: no budget
}

// New returns a Logger for one downstream server, writing within b
// (DefaultBudget for the relay; the zero Budget writes every line). The
// server name comes from the policy or the server's argv and is
// canonicalised like the rest.
func New(w io.Writer, server string, b Budget) *Logger {
	l := &Logger{z: zerolog.New(w).With().Timestamp().Str("server", Clean(server)).Int("pid", os.Getpid()).Logger()}
	l.lim = newLimiter(b, &l.z)
	return l
}

// Nop discards everything.
func Nop() *Logger { return &Logger{z: zerolog.Nop()} }

// Flush writes the summary lines of what the budget held back so far. The
// relay calls it as it ends; until then they are written when their window
// ends.
func (l *Logger) Flush() {
	if l.lim != nil {
		l.lim.flush()
	}
}

// Event is one decision. Log canonicalises every string in it (see Clean),
// so a caller may pass what the agent or the server sent; Value is never
// written, only its length and hash.
type Event struct {
	Level     zerolog.Level
	Event     Kind
	Direction string
	Method    string
	Tool      string
	ID        string
	ErrorCode string
	Field     string
	Rule      string
	Action    Action
	Message   string
	// PolicyText says Message is made of the policy's own text (a rule's
	// pattern, remediation) and peer text that was canonicalised already:
	// backticks in it are the policy's and are written as they are, so a
	// pattern reads in the log as it does in the policy.
	PolicyText bool
	Value      []byte // the offending value: written as value_len and value_sha256
	Extra      func(e *zerolog.Event)
}

// Log writes one line, unless the budget holds it back (see Budget).
// Fields that do not apply (empty strings) are omitted rather than
// written as "", so a line says only what happened.
func (l *Logger) Log(ev Event) {
	if l.z.GetLevel() > ev.Level {
		return
	}
	k := kindKey{event: Kind(Clean(string(ev.Event))), direction: Clean(ev.Direction), method: Clean(ev.Method), tool: Clean(ev.Tool),
		errorCode: Clean(ev.ErrorCode), rule: Clean(ev.Rule), action: Action(Clean(string(ev.Action)))}
	if l.lim != nil && !l.lim.allow(k, ev.Level) {
		return
	}
	e := l.z.WithLevel(ev.Level)
	if e == nil {
		return
	}
	str := func(name, v string) {
		if v != "" {
			e = e.Str(name, v)
		}
	}
	str("event", string(k.event))
	str("direction", k.direction)
	str("method", k.method)
	str("tool", k.tool)
	str("id", Clean(ev.ID))
	str("error_code", k.errorCode)
	str("field", Clean(ev.Field))
	str("rule", k.rule)
	str("action", string(k.action))
	if ev.Value != nil {
		sum := sha256.Sum256(ev.Value)
		e = e.Int("value_len", len(ev.Value)).Str("value_sha256", hex.EncodeToString(sum[:8]))
	}
	if ev.Extra != nil {
		ev.Extra(e)
	}
	if ev.PolicyText {
		e.Msg(cleanKeepingBackticks(ev.Message, MaxMessageBytes))
		return
	}
	e.Msg(cleanN(ev.Message, MaxMessageBytes))
}

// Clean makes a string from a peer safe to write into the log and to show
// in a terminal: the free_text canonicaliser, capped at MaxFieldBytes. See
// clean.go.
func Clean(s string) string { return cleanN(s, MaxFieldBytes) }
