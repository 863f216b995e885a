package pins

import (
	"maps"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// Reload returns the pin state of the session under opt, the settings of
// a reloaded policy, for use in place of s from now on. A reload is not a
// way to reset pins:
//
//   - without a lock file in opt, every pin s holds stays a pin (pinned
//     on first sight, or from the lock file s had), and every item keeps
//     its status: a rug pull withheld before the reload stays withheld;
//   - with a lock file, its items are the pins, and every item the
//     session has seen listed is judged again against them from the
//     definition it last saw: one that matches its new pin is allowed,
//     one that does not is withheld (INPUT_REJECTED_TOOL_CHANGED), a tool
//     or prompt the lock does not pin is refused. So `mcpguard pin` after
//     a server update, then SIGHUP, releases the updated tools without a
//     restart.
//
// Lint settings apply to items listed after the reload.
func (s *Session) Reload(opt Options) *Session {
	if opt.Lint == nil {
		opt.Lint = s.lints
	}
	n := NewSession(opt)
	s.mu.Lock()
	defer s.mu.Unlock()
	n.listed = s.listed
	n.linted = maps.Clone(s.linted)
	for k := range numKinds {
		n.seen[k] = maps.Clone(s.seen[k])
	}
	if opt.Lock == nil {
		for k := range numKinds {
			n.pinned[k] = maps.Clone(s.pinned[k])
			n.digests[k] = maps.Clone(s.digests[k])
			n.pinnedLoose[k] = maps.Clone(s.pinnedLoose[k])
			n.withheld[k] = maps.Clone(s.withheld[k])
			n.state[k] = maps.Clone(s.state[k])
			n.counts[k] = s.counts[k]
		}
		n.instr, n.instrSet, n.info = s.instr, s.instrSet, s.info
		return n
	}
	for k := range numKinds {
		kind := Kind(k)
		for key, digest := range s.seen[k] {
			var block *Block
			pin, pinned := n.digests[k][key]
			switch {
			case pinned && pin == digest:
			case pinned:
				block = &Block{Code: codes.ToolChanged, Reason: kind.String() + " " + canon.FreeText(key, 256) + " differs from its pin in the reloaded lock file"}
			case kind == Tool || kind == Prompt:
				block = &Block{Code: codes.ToolUnpinned, Reason: "the lock file does not pin " + kind.String() + " " + canon.FreeText(key, 256)}
			default:
				continue // a resource the lock does not list may come from a template
			}
			if _, known := n.state[k][key]; !known {
				n.counts[k]++
			}
			n.state[k][key] = status{block: block}
			if block != nil {
				n.withheld[k][canon.Loose(key)] = block
			}
		}
	}
	return n
}
