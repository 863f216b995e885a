package proxy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/rs/zerolog"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
	"github.com/mcpguard/mcpguard/rules/rawjson"
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
	before, _ := r.session.ShownTools()
	r.session.Reload(p)
	after, complete := r.session.ShownTools()
	changed := !complete || !slices.Equal(before, after)
	tell := changed && r.toolsListChanged.Load()
	msg := "policy reloaded from " + p.Source
	switch {
	case tell:
		msg += "; the tools the client is shown changed: it is told to list them again"
	case changed:
		msg += "; the tools the client is shown changed, but the MCP server did not declare tools.listChanged: the client is not told, and sees the change when it lists the tools again"
	}
	r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventReload, Message: msg,
		Extra: func(e *zerolog.Event) {
			e.Str("mode", string(p.Mode))
			if changed {
				e.Bool("tools_list_changed", tell)
			}
		}})
	if tell {
		r.answerAgent([]byte(toolListChanged))
	}
	return p
}

// toolListChanged is the notification that tells the client to list the
// tools again. mcpguard sends it after a reload that changes which of
// the tools the server listed the client is shown (a tool the new policy
// denies or the new lock withholds, or one it releases), when the server
// declared tools.listChanged: MCP has a client expect the notification
// only then. A server that did not declare it gets no declaration from
// mcpguard either: it would promise the client notifications for the
// server's own changes too, which such a server never sends. That client
// is not told; it sees the change when it lists the tools again, and
// calls of tools hidden now are refused meanwhile.
const toolListChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// noteCapabilities learns from the server's initialize (or
// server/discover) result whether it declared tools.listChanged.
func (r *relay) noteCapabilities(result jsontext.Value) {
	tools := rawjson.Member(rawjson.Member(result, "capabilities"), "tools")
	r.toolsListChanged.Store(string(rawjson.Member(tools, "listChanged")) == "true")
}
