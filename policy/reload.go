package policy

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
	s.pins.Store(s.pinState().Reload(p.pinOptions()))
	s.pol.Store(p)
	s.followClient() // client_roots rules: the new policy's, with the roots known
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
