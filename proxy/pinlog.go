package proxy

import (
	"strings"

	"github.com/rs/zerolog"

	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// logPin writes one line for a pin decision: the item, what it does to it,
// which fields differ from the pin, and the lint findings.
func (r *relay) logPin(ev pins.Event) {
	level := zerolog.WarnLevel
	if ev.Action == pins.ActionAllowed && len(ev.Findings) == 0 {
		level = zerolog.InfoLevel
	}
	rule := "pins"
	if ev.Code == "" && len(ev.Findings) > 0 {
		rule = "lint"
	}
	var findings []string
	for _, f := range ev.Findings {
		findings = append(findings, eventlog.Clean(f.String()))
	}
	fields := make([]string, len(ev.Fields))
	for i, f := range ev.Fields {
		fields[i] = eventlog.Clean(f)
	}
	msg := ev.Message
	if len(findings) > 0 {
		msg += "; lint: " + strings.Join(findings, ", ")
	}
	r.log.Log(eventlog.Event{Level: level, Event: eventlog.EventPin, Direction: eventlog.Egress,
		Tool: ev.Name, ErrorCode: ev.Code, Field: strings.Join(fields, ","), Rule: rule, Action: eventlog.Action(ev.Action), Message: msg,
		Extra: func(e *zerolog.Event) {
			e.Str("kind", ev.Kind)
			if len(fields) > 0 {
				e.Strs("changed_fields", fields)
			}
			if len(findings) > 0 {
				e.Strs("findings", findings)
			}
		}})
}
