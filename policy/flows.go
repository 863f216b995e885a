package policy

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// Label is what an agent session learns from a tool: its context now
// holds private data, or content an attacker may have written, or the
// tool sends data out. Together they are the "lethal trifecta": an agent
// that holds private data, reads untrusted text and can send data out can
// be told by that text to send the data out.
type Label string

// The labels a policy may write.
const (
	// Private: the result carries secrets or personal data (a credential
	// file, mail, a database row). Set when the result reaches the agent.
	Private Label = "private"
	// Untrusted: the result carries text an attacker may have written (a
	// web page, an issue, an email). Set when the result reaches the agent.
	Untrusted Label = "untrusted"
	// Exfiltrates: the call sends data out (a request to a URL, a message,
	// a commit). Judged by the flows: rules when it is called.
	Exfiltrates Label = "exfiltrates"
)

var allLabels = [...]Label{Private, Untrusted, Exfiltrates}

// labelSet is a set of labels, bit i for allLabels[i].
type labelSet uint8

func labelBit(l Label) labelSet {
	for i, a := range allLabels {
		if a == l {
			return 1 << i
		}
	}
	return 0
}

func (s labelSet) has(l Label) bool { return s&labelBit(l) != 0 }

// resultLabels are the labels a result gives the session.
var resultLabels = labelBit(Private) | labelBit(Untrusted)

// LabelEvent says which event gave the agent session a label: what a
// flows: rejection names, and what the processes of a session share.
type LabelEvent struct {
	Label  Label     `json:"label"`
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	Why    string    `json:"why"` // "the policy labels the tool", "a credential was redacted from its result", ...
	Time   time.Time `json:"time"`
	PID    int       `json:"pid"`
}

// LabelStore is the state the mcpguard processes of one agent session
// share: every label one of them has seen, with the event that set it. It
// must be safe for concurrent use. A label once held is never dropped
// while the session lasts.
type LabelStore interface {
	// Record adds e unless the session already holds e.Label.
	Record(e LabelEvent) error
	// Held returns the first event of every label the session holds.
	Held() ([]LabelEvent, error)
}

// flowRule is one compiled entry under flows:: an exfiltrates call is
// refused (or audited, or asked about) once the session holds every label
// of after.
type flowRule struct {
	rule  string // "flows[N]"
	after labelSet
	audit bool // action: audit
	ask   bool // action: ask
}

type flowV1 struct {
	After  []string `json:"after"`
	Action string   `json:"action"`
}

// compileFlows compiles the flows: section.
func compileFlows(fs []flowV1) []*flowRule {
	var out []*flowRule
	for i, f := range fs {
		r := &flowRule{rule: "flows[" + strconv.Itoa(i) + "]", audit: f.Action == "audit", ask: f.Action == "ask"}
		for _, l := range f.After {
			r.after |= labelBit(Label(l))
		}
		out = append(out, r)
	}
	return out
}

// flowState is what a Session knows of its agent session's labels: the
// labels it has seen itself, and those read from the shared store. It only
// grows, so a store that another process empties cannot make this process
// forget what it saw.
type flowState struct {
	mu     sync.Mutex
	held   [len(allLabels)]*LabelEvent
	stored labelSet // labels known to be in the store (written or read)
	store  LabelStore
	server string
	// project judges whether a path lies in the project (the working
	// directory): a call that reads outside it gives the session the
	// private label. Made on first use; nil when it cannot be.
	project     *rules.PathScope
	projectOnce sync.Once
}

// ShareLabels makes the session keep its labels in store, shared with the
// other mcpguard processes of the agent session, naming server as the
// server of the events it records. Call it before the session is used;
// without it labels live in this session only.
func (s *Session) ShareLabels(store LabelStore, server string) {
	s.flow.store, s.flow.server = store, server
}

// learn gives the session the labels of set from one event; it returns
// the events that are new to this process, and the error of the store.
func (f *flowState) learn(set labelSet, tool, why string) ([]LabelEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var fresh []LabelEvent
	var err error
	now := time.Now().UTC()
	for i, l := range allLabels {
		bit := labelSet(1) << i
		if set&bit == 0 || f.stored&bit != 0 {
			continue
		}
		e := LabelEvent{Label: l, Server: f.server, Tool: tool, Why: why, Time: now, PID: os.Getpid()}
		if f.held[i] == nil {
			f.held[i] = &e
			fresh = append(fresh, e)
		}
		if f.store == nil {
			continue
		}
		if serr := f.store.Record(*f.held[i]); serr != nil {
			err = serr
			continue
		}
		f.stored |= bit
	}
	return fresh, err
}

// holding returns the events of the labels of want the session holds,
// reading the store when this process has not seen them all. err is the
// store's: the answer is then what this process saw itself.
func (f *flowState) holding(want labelSet) ([]*LabelEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.store != nil && f.have()&want != want {
		var events []LabelEvent
		if events, err = f.store.Held(); err == nil {
			for _, e := range events {
				for i, l := range allLabels {
					if e.Label != l {
						continue
					}
					if f.held[i] == nil {
						f.held[i] = &e
					}
					f.stored |= 1 << i
				}
			}
		}
	}
	var out []*LabelEvent
	for i := range allLabels {
		if want&(1<<i) != 0 && f.held[i] != nil {
			out = append(out, f.held[i])
		}
	}
	return out, err
}

func (f *flowState) have() labelSet {
	var s labelSet
	for i, e := range f.held {
		if e != nil {
			s |= 1 << i
		}
	}
	return s
}

// checkFlows judges a call of tool by the flows: rules: when the tool is
// labelled exfiltrates and the agent session holds every label a rule
// names, the call is refused (or only audited, audit true; or held for
// the user's approval, ask true), and the rejection names the event that
// set each label. This stops the cross-server chain of the lethal
// trifecta: a secret read through one server, then sent out in a URL
// through another, told to by a web page.
//
// When the shared state cannot be read, a call a rule would refuse (or
// ask about) on the labels of other processes is refused (or asked
// about): fail closed.
func (s judge) checkFlows(tool string) (rej *message.Rejection, audit, ask bool) {
	p := s.policy() // one policy for the whole judgement, whatever a reload does
	if len(p.flows) == 0 || !p.labelsOf(tool).has(Exfiltrates) {
		return nil, false, false
	}
	var want labelSet
	for _, r := range p.flows {
		want |= r.after
	}
	events, err := s.flow.holding(want)
	var held labelSet
	for _, e := range events {
		held |= labelBit(e.Label)
	}
	for _, r := range p.flows {
		if held&r.after == r.after {
			return flowRejection(tool, r, events), r.audit, r.ask
		}
	}
	if err != nil {
		for _, r := range p.flows {
			if !r.audit {
				return &message.Rejection{
					ErrorCode:   codes.Flow,
					Error:       "rejected MCP input: tool " + clean(tool) + " sends data out, and the labels this agent session holds cannot be read (" + clean(err.Error()) + ") (policy entry " + r.rule + ")",
					Reason:      "the session's labels cannot be read",
					Remediation: "Restart the agent session; check that mcpguard's state directory is private to your user.",
					Tool:        clean(tool), Rule: r.rule, Retryable: true,
				}, false, r.ask
			}
		}
	}
	return nil, false, false
}

func flowRejection(tool string, r *flowRule, events []*LabelEvent) *message.Rejection {
	var b strings.Builder
	for _, e := range events {
		if !r.after.has(e.Label) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(string(e.Label) + " since " + e.Time.Format(time.RFC3339) + ": server " + clean(e.Server) + ", tool " + clean(e.Tool) + " (" + clean(e.Why) + ")")
	}
	reason := "tool " + clean(tool) + " sends data out, and this agent session holds " + b.String()
	return &message.Rejection{
		ErrorCode:   codes.Flow,
		Error:       "rejected MCP input: " + reason + " (policy entry " + r.rule + ")",
		Reason:      reason,
		Remediation: "Data this session read may be sent out at the request of text it read. Start a new agent session for this call, or run it outside MCP.",
		Tool:        clean(tool),
		Rule:        r.rule,
	}
}

// labelsOf returns the labels the tools: section gives tool.
// A call is judged under its name and the name the agent read in
// tools/list (see checkToolCall).
func (p *Policy) labelsOf(tool string) labelSet {
	if !p.labelled {
		return 0
	}
	set := p.callPlanFor(tool).labels
	if visible := canon.Visible(tool); visible != tool {
		set |= p.callPlanFor(visible).labels
	}
	return set
}

// Why an event set a label, as the rejection and the store say it.
const (
	whyPolicy   = "the policy labels the tool"
	whyRedacted = "a credential was redacted from its result"
	whyOutside  = "it read a path outside the project"
)

// learnResult gives the session the labels of a response to call: the
// tool's result labels, and private when a credential was redacted from
// it or its call read outside the project (each event says which). What
// is new to this process goes to OnLabel.
func (s judge) learnResult(call *Call, rewrites []Rewrite) {
	tool := callTool(call)
	if tool == "" {
		return
	}
	byPolicy := s.policy().labelsOf(tool) & resultLabels
	var fact labelSet
	why := ""
	if call.outside {
		fact, why = labelBit(Private), whyOutside
	} else if slices.ContainsFunc(rewrites, func(rw Rewrite) bool { return rw.Canonicaliser == "secrets" }) {
		fact, why = labelBit(Private), whyRedacted
	}
	if byPolicy|fact == 0 {
		return
	}
	// What mcpguard saw itself is the better account of a label the
	// policy also gives.
	fresh, err := s.flow.learn(fact, clean(tool), why)
	more, err2 := s.flow.learn(byPolicy&^fact, clean(tool), whyPolicy)
	fresh = append(fresh, more...)
	if err == nil {
		err = err2
	}
	if s.OnLabel != nil && (len(fresh) > 0 || err != nil) {
		s.OnLabel(fresh, err)
	}
}

// readsOutsideProject reports whether a call of tool that passed its
// rules reads a path outside the project: a field a path_scope rule of
// the policy selects holds a path outside the working directory. Only
// asked while the session does not hold private and the policy labels
// something (a policy without labels or flows pays nothing).
func (s judge) readsOutsideProject(tool string, args []byte) bool {
	if !s.policy().labelled || s.flow.holdsLocally(Private) {
		return false
	}
	var paths []*ingressRule
	for _, r := range s.policy().callPlanFor(tool).rules {
		if r.checkName == "path_scope" {
			paths = append(paths, r)
		}
	}
	if len(paths) == 0 {
		return false
	}
	project := s.flow.projectScope()
	if project == nil {
		return false
	}
	w := walkers.Get().(*walker)
	w.session = s
	defer w.release()
	if w.parseArgs(args, tool) != nil {
		return false
	}
	probe := make([]*ingressRule, len(paths))
	for i, r := range paths {
		q := *r
		q.check = project
		probe[i] = &q
	}
	return w.checkArgs(probe, tool, true) != nil
}

func (f *flowState) holdsLocally(l Label) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.have().has(l)
}

// projectScope is the project as a path_scope: the working directory.
func (f *flowState) projectScope() *rules.PathScope {
	f.projectOnce.Do(func() {
		if wd, err := os.Getwd(); err == nil {
			f.project, _ = rules.NewPathScope([]string{wd})
		}
	})
	return f.project
}
