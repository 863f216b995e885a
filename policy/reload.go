package policy

import (
	"maps"
	"slices"

	"github.com/mcpguard/mcpguard/policy/pins"
)

// Reload puts p in force for the rest of the session (SIGHUP). Calls
// judged after it returns are judged by p; what the session has learnt
// stays: the server's input schemas and tasks, the client's roots (the
// new policy's client_roots rules follow them), approvals given (for the
// entries that still say the same: Policy.askDefinition), the
// pins (see pins.Session.Reload: a reload never resets them), and the
// counts of every rate_limit rule p keeps (same tools, methods and fields,
// in the same order among those; new numbers apply to the old log). The
// windows of rate_limit rules p no longer has are dropped.
func (s *Session) Reload(p *Policy) {
	s.swap.Lock()
	// client_roots rules: the new policy's, with the roots known
	s.cur.Store(&inForce{pol: p, pins: s.now().pinState().Reload(p.pinOptions()), scopes: s.scopesFor(p)})
	s.swap.Unlock()
	s.limits.keep(p)
}

// keep drops the windows of rules p no longer has (after a reload).
func (l *limitState) keep(p *Policy) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.windows {
		if !p.hasLimit(id) {
			delete(l.windows, id)
		}
	}
}

func (p *Policy) hasLimit(id string) bool {
	for _, r := range p.limits {
		if r.limitID == id {
			return true
		}
	}
	return false
}

// maxRecordedTools bounds the tool names a session keeps for ShownTools.
const maxRecordedTools = 10000

// recordTool notes a tool name the server listed.
func (s *Session) recordTool(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.toolNames[name]:
	case len(s.toolNames) >= maxRecordedTools:
		s.toolsOverflow = true
	default:
		if s.toolNames == nil {
			s.toolNames = map[string]bool{}
		}
		s.toolNames[name] = true
	}
}

// ShownTools returns the names, sorted, of the tools the server has
// listed in this session that a client listing them now is shown: not
// hidden by the policy in force, not withheld by the pins. Compared
// before and after a Reload, it tells whether the client's tool list is
// stale (notifications/tools/list_changed). complete is false when the
// server listed more tools than the session keeps names of: a caller
// cannot tell then, and should take the list as changed.
func (s *Session) ShownTools() (names []string, complete bool) {
	s.mu.Lock()
	listed := slices.Collect(maps.Keys(s.toolNames))
	complete = !s.toolsOverflow
	s.mu.Unlock()
	j := s.now() // the policy and the pins of one moment
	p, pinned := j.policy(), j.pinState()
	for _, name := range listed {
		if !p.hidesTool(name) && pinned.Check(pins.Tool, name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, complete
}
