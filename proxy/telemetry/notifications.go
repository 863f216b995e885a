package telemetry

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// notificationMethods are the notifications mcpguard.notifications
// counts under their own method; any other method (a peer chooses it)
// is counted as "other", so that the counter has a few dozen series
// whatever a peer sends.
var notificationMethods = [...]string{
	"notifications/cancelled", "notifications/progress", "notifications/initialized",
	"notifications/roots/list_changed", "notifications/message", "notifications/resources/updated",
	"notifications/resources/list_changed", "notifications/tools/list_changed",
	"notifications/prompts/list_changed", "notifications/elicitation/complete",
	"notifications/tasks/status", otherNotification,
}

const otherNotification = "other"

var notificationIndex = func() map[string]int {
	m := make(map[string]int, len(notificationMethods))
	for i, method := range notificationMethods {
		m[method] = i
	}
	return m
}()

// notificationCounts are the notifications read so far, by direction
// (0: from the agent, 1: from the server) and method.
type notificationCounts [2][len(notificationMethods)]atomic.Int64

// Notification counts a notification read from the agent, or from the
// server (egress). It is one atomic add on the relay's goroutine: the
// counts are read when the metrics are exported, and nothing of the
// notification but its method, when it is one MCP defines, is kept.
func (e *Exporter) Notification(method string, egress bool) {
	if e == nil || e.mp == nil {
		return
	}
	i, ok := notificationIndex[method]
	if !ok {
		i = len(notificationMethods) - 1
	}
	d := 0
	if egress {
		d = 1
	}
	e.notes[d][i].Add(1)
}

// observeNotifications registers mcpguard.notifications, which reports
// e's counts under attribute sets built once.
func observeNotifications(m metric.Meter, e *Exporter) error {
	var sets [2][len(notificationMethods)]attribute.Set
	for d, dir := range [2]string{eventlog.Ingress, eventlog.Egress} {
		for i, method := range notificationMethods {
			sets[d][i] = attribute.NewSet(keyServer.String(e.cfg.Server), semconv.McpMethodNameKey.String(method), keyDirection.String(dir))
		}
	}
	_, err := m.Int64ObservableCounter("mcpguard.notifications", metric.WithUnit("{notification}"),
		metric.WithDescription("Notifications read from the agent (ingress) and the server (egress), by method"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			for d := range e.notes {
				for i := range e.notes[d] {
					if n := e.notes[d][i].Load(); n > 0 {
						o.Observe(n, metric.WithAttributeSet(sets[d][i]))
					}
				}
			}
			return nil
		}))
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
}
