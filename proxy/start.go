package proxy

import (
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/mcpguard/mcpguard/policy"
)

// Server is an MCP server started before the policy it runs under is
// known (Start), so that the policy loads and validates while the server
// starts: a real server takes far longer to start than a policy to load.
//
// Until Run puts a policy in force nothing is relayed: the agent's
// messages wait in mcpguard's stdin, the server's in its stdout pipe, and
// its stderr in its own pipe, unread, so that the redaction the policy
// defines applies to every byte of it. That hold is bounded by the pipe's
// buffer: a server that writes more blocks until the policy is in force.
// A policy that does not load ends the server with Abort, before any byte
// has reached the agent, the server, or stderr.
type Server struct {
	argv    []string
	d       *downstream
	err     error                         // the start failed; Run reports it
	inForce atomic.Pointer[policy.Policy] // for the server's stderr; a reload replaces it
	release chan bool                     // to the stderr copier: true copies, false drops
	signals chan os.Signal
	reloads chan struct{}
}

// Start starts cfg.Argv with the server's stderr held (see Server) and
// forwards SIGINT and SIGTERM to it from now on, as Run does; a SIGHUP is
// queued as a reload when cfg.Reload is set. Only cfg's Argv, Stderr,
// RawStderr, Grace and Reload are read. With cfg.RawStderr the server's
// stderr is not filtered, so nothing holds it: give such a run its policy
// before starting the server (Run without Server does that).
//
// A server that cannot start is reported by Run, exit status 127, as when
// Run starts it itself.
func Start(cfg Config) *Server {
	if cfg.Grace <= 0 { // not withDefaults: it would build the baseline policy
		cfg.Grace = DefaultGrace
	}
	// Writes to a closed stdout must fail with EPIPE, not kill mcpguard
	// before it has stopped the server. Notify (not Ignore) so the server
	// does not inherit an ignored SIGPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	s := &Server{argv: cfg.Argv, release: make(chan bool, 1)}
	redact := func(text string) string { return s.inForce.Load().RedactSecrets(text) }
	s.d, s.err = startDownstream(cfg.Argv, cfg.Stderr, cfg.RawStderr, redact, s.release)
	if s.err != nil {
		return s
	}
	s.signals = make(chan os.Signal, 4)
	signal.Notify(s.signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// One pending reload is enough: a SIGHUP that lands while one runs
	// is served by the next, which reads the files after it.
	s.reloads = make(chan struct{}, 1)
	go func() {
		defer close(s.reloads) // its only sender
		for sig := range s.signals {
			if sig == syscall.SIGHUP && cfg.Reload != nil {
				select {
				case s.reloads <- struct{}{}:
				default:
				}
				continue
			}
			s.d.signal(sig.(syscall.Signal))
			go s.d.escalate(cfg.Grace)
		}
	}()
	return s
}

// inForceNow puts p in force for the server's stderr and lets its held
// stderr through.
func (s *Server) inForceNow(p *policy.Policy) {
	s.inForce.Store(p)
	s.release <- true
}

// stopSignals ends the forwarding of signals to the server.
func (s *Server) stopSignals() {
	signal.Stop(s.signals) // no send after it returns
	close(s.signals)
}

// Abort ends a server whose policy did not load: it kills the server's
// process group, drops what it wrote to stderr unread, and returns once
// the server has exited. Nothing it wrote reaches anyone.
func (s *Server) Abort() {
	if s.err != nil {
		return
	}
	s.stopSignals()
	s.d.signal(syscall.SIGKILL)
	<-s.d.exited
	s.release <- false
	<-s.d.stderrDone
	_ = s.d.stdin.close()
	_ = s.d.stdout.Close()
}
