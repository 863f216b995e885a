package proxy

import (
	"github.com/rs/zerolog"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// logLabels writes one line for each label this session gives the agent
// session, and one warning, the first time only, when the labels cannot
// be shared with the other mcpguard processes of the session (each
// process then judges flows on what it saw itself).
func (r *relay) logLabels(fresh []policy.LabelEvent, err error) {
	for _, e := range fresh {
		r.log.Log(eventlog.Event{Level: zerolog.InfoLevel, Event: eventlog.EventLabel, Direction: eventlog.Egress,
			Method: "tools/call", Tool: e.Tool, Message: "the agent session now holds " + string(e.Label) + ": " + e.Why,
			Extra: func(z *zerolog.Event) { z.Str("label", string(e.Label)) }})
	}
	if err != nil && r.labelWarned.CompareAndSwap(false, true) {
		r.log.Log(eventlog.Event{Level: zerolog.WarnLevel, Event: eventlog.EventWarning,
			Message: "labels cannot be shared with the agent session's other servers: " + err.Error()})
	}
}
