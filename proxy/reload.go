package proxy

import (
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// reload reads the policy again (SIGHUP) and puts it in force for the
// calls judged from now on; it returns the policy put in force, nil when
// none was. The session goes on untouched: ids in flight, calls held for
// the tools list, pins and rate-limit counts stay (policy.Session.Reload).
// A policy or lock file that does not load leaves the one in force as it
// is, and the reason is logged and written to stderr with the
// file:line:col of each problem.
func (r *relay) reload() *policy.Policy {
	p, err := r.cfg.Reload()
	if err != nil {
		problems := []string{err.Error()}
		var errs policy.Errors
		if errors.As(err, &errs) {
			problems = problems[:0]
			for _, e := range errs {
				problems = append(problems, e.Error())
			}
		}
		fmt.Fprintf(r.cfg.Stderr, "mcpguard: reload failed; the policy in force stays:\n%v\n", err)
		r.log.Log(eventlog.Event{Level: zerolog.ErrorLevel, Event: eventlog.EventReload,
			Message: "policy reload failed; the policy in force stays: " + problems[0],
			Extra: func(e *zerolog.Event) {
				cleaned := make([]string, len(problems))
				for i, s := range problems {
					cleaned[i] = eventlog.Clean(s)
				}
				e.Strs("errors", cleaned)
			}})
		return nil
	}
	for _, w := range p.RootWarnings(r.cfg.Argv) {
		fmt.Fprintln(r.cfg.Stderr, "mcpguard: warning: "+w)
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventWarning, Message: w})
	}
	r.session.Reload(p)
	r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventReload, Message: "policy reloaded from " + p.Source,
		Extra: func(e *zerolog.Event) { e.Str("mode", string(p.Mode)) }})
	return p
}
