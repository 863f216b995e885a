package policy

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/rawjson"
)

// Verdict is the policy's answer for one message from the agent.
type Verdict struct {
	// Rejection is nil when the message may reach the server.
	Rejection *message.Rejection
	// Audit means the rejection is only logged (mode: audit) and the
	// message is forwarded.
	Audit bool
	// AsError: reply with a JSON-RPC error of code Code rather than a tool
	// result (reject_as: error, or a request other than tools/call).
	AsError bool
	Code    int64
	// Ask, when set, holds the call for the user's approval (see
	// ask.go); Rejection is then nil or audit-only.
	Ask *Ask
	// AskRoots: the request is not forwarded; Reply asks the client for
	// its roots instead of refusing it (asksForRoots). Rejection is nil.
	AskRoots bool
}

// Call is what the relay remembers of a request in flight, so that the
// response can be judged in its context.
type Call struct {
	Method string
	Tool   string // tools/call, prompts/get: the name called; tasks/result: the tool that created the task
	Task   bool   // tools/call: task-augmented (params.task), its reply creates a task
	TaskID string // tasks/result: params.taskId
	// outside: the call reads a path outside the project (see
	// readsOutsideProject); its result gives the session private.
	outside bool
}

// CallOf is what the relay remembers of a request from the agent that
// Ingress allowed, for judging its response.
func (s *Session) CallOf(m *message.Message) Call {
	c := Call{Method: m.Method, Tool: m.Name}
	switch m.Method {
	case "tools/call":
		c.Task = m.Task
		if j := s.now(); j.policy().labelled { // else nothing reads outside
			c.outside = j.readsOutsideProject(m.Name, m.Arguments)
		}
	case "tasks/result":
		var p struct {
			TaskID string `json:"taskId"`
		}
		if unmarshalLoose(m.Params, &p) == nil && p.TaskID != "" {
			c.TaskID = p.TaskID
			c.Tool = s.taskTool(p.TaskID)
		}
	}
	return c
}

// maxTasks bounds the tasks a session remembers; the oldest is forgotten
// first, and a tasks/result for a forgotten task is refused when the
// policy has egress rules.
const maxTasks = 4096

// noteTask remembers which tool a task belongs to, from the reply to a
// task-augmented tools/call (a CreateTaskResult: {"task":{"taskId":...}}),
// so that tasks/result gets that tool's egress rules.
func (s *Session) noteTask(tool string, result jsontext.Value) {
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if unmarshalLoose(result, &r) != nil || r.Task.TaskID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = map[string]string{}
	}
	if _, known := s.tasks[r.Task.TaskID]; !known {
		if len(s.taskOrder) >= maxTasks {
			delete(s.tasks, s.taskOrder[0])
			s.taskOrder = s.taskOrder[1:]
		}
		s.taskOrder = append(s.taskOrder, r.Task.TaskID)
	}
	s.tasks[r.Task.TaskID] = tool
}

func (s *Session) taskTool(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks[id]
}

// memberKind returns the kind of obj[name] ('{', '"', ...), or 0 when
// obj is not an object or has no such member.
func memberKind(obj jsontext.Value, name string) jsontext.Kind {
	return rawjson.Member(obj, name).Kind()
}

// Rewrite is one change the egress side made, for the log.
type Rewrite struct {
	Field         string // where in the message, e.g. result.content[0].text
	Canonicaliser string // text, free_text, path, secrets, images, links; or "hidden" for a denied tool removed from tools/list
	Removed       int    // bytes removed
	// Tool and Rule: for a hidden tool, its name and the policy entry
	// that denies it (tools.NAME or unknown_tools). Rule alone: for
	// secrets, the rule that found a credential; for images and links,
	// the host.
	Tool, Rule string
	// Fields is, for the record that stands for the rewrites past
	// MaxRewrites (Field "(more)"), how many it stands for; 0 otherwise.
	Fields int
}

// MaxRewrites bounds the Rewrite records one message yields: the rest are
// folded into one "(more)" record that counts them and the bytes they
// removed. A hostile result of millions of short strings with escapes
// otherwise held a record (and a rendered path) per string, several times
// the message's own size.
const MaxRewrites = 64

// rewriteList collects a message's rewrites within MaxRewrites.
type rewriteList struct {
	list []Rewrite
	more Rewrite
}

func (l *rewriteList) add(rw Rewrite) {
	if len(l.list) < MaxRewrites {
		l.list = append(l.list, rw)
		return
	}
	l.more.Fields++
	l.more.Removed += rw.Removed
}

// records returns the rewrites kept and, when some were folded, the
// "(more)" record.
func (l *rewriteList) records() []Rewrite {
	if l.more.Fields == 0 {
		return l.list
	}
	l.more.Field, l.more.Canonicaliser = "(more)", "several"
	return append(l.list, l.more)
}

// Session is a policy applied to one downstream: it holds what the session
// learns, the input schemas the server announced. Safe for concurrent use.
type Session struct {
	// cur is the policy in force, its pins and client roots: Reload replaces
	// them at once, and everything the session has learnt stays. A
	// judgement loads it once (now).
	cur atomic.Pointer[inForce]
	// swap orders the writers of cur (Reload, new client directories).
	swap sync.Mutex

	mu sync.Mutex
	// serverSchemas maps tool name to its compiled inputSchema; a nil
	// value means the server announced one that cannot be enforced.
	serverSchemas map[string]*argSchema

	// tasks maps a task id to the tool whose task-augmented call created
	// it; taskOrder is their order of creation, for eviction.
	tasks     map[string]string
	taskOrder []string

	// limits is the log of the rate_limit rules (checkLimits).
	limits limitState

	// approved holds the user's "allow for this session" answers (see
	// Remember).
	approved map[string]bool

	// listed is set once a tools/list result has been seen.
	listed bool
	// toolNames are the names of the tools the server listed, hidden ones
	// included, up to maxRecordedTools (toolsOverflow: more were listed),
	// so that a reload can tell what the agent is shown (ShownTools).
	toolNames     map[string]bool
	toolsOverflow bool

	// offline (mcpguard eval without a tools list) skips server_schema
	// checks of tools whose schema is unknown instead of refusing them.
	offline bool

	// clientRoots are the directories of the client's last roots/list
	// answer that the policy accepted (see RootsAnswer).
	clientRoots atomic.Pointer[[]string]
	// serverDirs are the directories of the server's command line (see
	// SetServerArgv); set before the session is used.
	serverDirs []string

	// OnPin, when set (before the session is used), gets every pin
	// decision: withheld and audited items, new items, lint findings,
	// replaced instructions.
	OnPin func(pins.Event)
	// OnServerRequest, when set (before the session is used), gets every
	// decision on an inputRequests entry of a result (see Egress); the
	// relay logs its own decisions on the server's requests.
	OnServerRequest func(ServerRequestDecision)
	// OnLabel, when set (before the session is used), gets the labels
	// this session gives its agent session that are new to it, and the
	// error when the shared state could not take them.
	OnLabel func(fresh []LabelEvent, err error)

	flow flowState
}

// AwaitsServerSchema reports whether m is a tools/call that
// server_schema: enforce cannot judge yet: the tool's inputSchema is
// unknown because no tools/list result has been seen. The relay then asks
// the server for its tools itself (LearnTools) and judges m afterwards,
// so that a client calling a tool it remembers from an earlier connection
// is not refused for skipping tools/list.
func (s *Session) AwaitsServerSchema(m *message.Message) bool {
	return s.now().awaitsServerSchema(m)
}

func (s judge) awaitsServerSchema(m *message.Message) bool {
	if m.Kind != message.Request || m.Method != "tools/call" || s.offline || !s.policy().capturesSchemas() {
		return false
	}
	plan := s.policy().callPlanFor(m.Name)
	if plan.denied || !plan.serverSchema {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, known := s.serverSchemas[m.Name]
	return !known && !s.listed
}

// LearnTools learns the input schemas of one page of a tools/list result
// that mcpguard asked for itself (nothing of it reaches the agent), and
// returns the page's nextCursor, "" on the last page.
func (s *Session) LearnTools(m *message.Message) (cursor string, err error) {
	if m.Kind != message.Response || m.Result == nil {
		return "", errors.New("tools/list failed")
	}
	if _, _, err := s.now().toolsList(m); err != nil {
		return "", err
	}
	return nextCursor(m.Result), nil
}

// nextCursor is a list result's nextCursor, "" when there is none.
func nextCursor(result jsontext.Value) string {
	var page struct {
		NextCursor string `json:"nextCursor"`
	}
	_ = unmarshalLoose(result, &page)
	return page.NextCursor
}

// NewSession starts applying p to one downstream server.
func (p *Policy) NewSession() *Session {
	s := &Session{serverSchemas: map[string]*argSchema{}}
	s.cur.Store(&inForce{pol: p, pins: pins.NewSession(p.pinOptions())})
	return s
}

// pinOptions are the pin settings of p.
func (p *Policy) pinOptions() pins.Options {
	return pins.Options{Lock: p.lock, Audit: p.Mode == Audit, LintEnforce: p.LintEnforce, LintAllow: p.LintAllow, Lint: p.linted}
}

// inForce is what a reload replaces at once: the policy, the pin state
// kept under it and the checks of its client_roots rules.
type inForce struct {
	pol    *Policy
	pins   *pins.Session
	scopes *clientScopes
}

// judge is the session seen under one inForce. Each message is judged
// through one judge, so that a reload (SIGHUP) in the middle of a
// judgement cannot have it judged partly by the old policy and partly by
// the new one: a denial of the old with the audit mode of the new would
// forward a call neither policy forwards.
type judge struct {
	*Session
	in *inForce
	// answered: the request carries the user's answer about itself (see
	// Session.IngressAnswered); rate limits neither refuse nor count it.
	answered bool
}

// now is the session under the policy in force at this moment.
func (s *Session) now() judge { return judge{Session: s, in: s.cur.Load()} }

// policy is the policy this judgement is made by.
func (s judge) policy() *Policy { return s.in.pol }

// pinState is the pin state this judgement is made by.
func (s judge) pinState() *pins.Session { return s.in.pins }

func (s *Session) serverSchema(tool string) (sch *argSchema, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sch, known = s.serverSchemas[tool]
	return sch, known
}

// capturesSchemas reports whether any tool wants server_schema: enforce.
func (p *Policy) capturesSchemas() bool {
	for _, t := range p.tools {
		if t.serverSchema {
			return true
		}
	}
	return false
}

type listedTool struct {
	Name        string         `json:"name"`
	InputSchema jsontext.Value `json:"inputSchema"`
}

// toolsList learns the input schemas a tools/list result announces and
// removes the tools the policy denies, so the agent is not even offered
// them. It returns m.Raw when it changes nothing.
//
// Tools are judged by the name the client will read (canon.Visible of the
// name): wi\u202epe is wipe once text is done with it, so `wipe: deny`
// hides it. A list in which two tools read as the same name is refused
// (an error): which of them a client calls is the server's choice.
func (s judge) toolsList(m *message.Message) ([]byte, []Rewrite, error) {
	capture := s.policy().capturesSchemas()
	if capture && nextCursor(m.Result) == "" {
		// The last page: a tool not seen by now is not the server's.
		s.mu.Lock()
		s.listed = true
		s.mu.Unlock()
	}
	seen := map[string]bool{}
	names := map[string]bool{}
	var kept []jsontext.Value
	var rewrites []Rewrite
	changed := false
	pinned := s.pinState().NewList(pins.Tool)
	err := eachArrayMember(m.Result, "tools", func(i int, v jsontext.Value) error {
		var t listedTool
		if err := unmarshalLoose(v, &t); err != nil {
			if !s.pinItem(pinned, v) {
				changed = true
				return nil
			}
			kept = append(kept, v)
			return nil
		}
		name := canon.Visible(t.Name)
		if names[name] {
			return errSameName
		}
		names[name] = true
		s.recordTool(t.Name)
		if s.policy().hidesTool(t.Name) {
			changed = true
			rewrites = append(rewrites, Rewrite{Field: "result.tools[" + strconv.Itoa(i) + "]", Canonicaliser: "hidden", Removed: len(v),
				Tool: clean(t.Name), Rule: s.policy().tool(t.Name).rule})
			return nil
		}
		if !s.pinItem(pinned, v) {
			changed = true
			return nil
		}
		kept = append(kept, v)
		if capture && t.Name != "" && t.InputSchema != nil {
			sch, err := s.policy().schemas.compile(t.InputSchema)
			if err != nil || seen[t.Name] {
				// Known but unenforceable: calls fail closed. A tool
				// announced twice is ambiguous (clients differ on which
				// entry wins), so neither schema is trusted.
				sch = nil
			}
			seen[t.Name] = true
			s.mu.Lock()
			s.serverSchemas[t.Name] = sch
			s.mu.Unlock()
		}
		return nil
	})
	if err == errSameName {
		return nil, nil, err
	}
	s.listDone(m.Result, pins.Tool)
	if err != nil || !changed {
		return m.Raw, nil, nil
	}
	out, err := replaceMember(m.Raw, "result", "tools", kept)
	if err != nil {
		return nil, nil, err
	}
	return out, rewrites, nil
}

// hidesTool reports whether a tools/list result loses the tool listed
// under name: the policy denies it under that name, the name the client
// will read (canon.Visible) or a loose spelling of it.
func (p *Policy) hidesTool(name string) bool {
	return p.Denied(name) || p.Denied(canon.Visible(name)) || p.looseDeny(name) != ""
}

var errSameName = errors.New("a tools/list result in which two tools have the same name once canonicalised")

// eachArrayMember calls fn for each element of obj[name] when it is an array.
func eachArrayMember(obj jsontext.Value, name string, fn func(i int, v jsontext.Value) error) error {
	if v := rawjson.Member(obj, name); v.Kind() == '[' {
		return rawjson.EachElement(v, fn)
	}
	return nil
}

// replaceMember returns msg with msg[outer][inner] replaced by an array of
// the given elements; every other byte keeps its exact text.
func replaceMember(msg []byte, outer, inner string, elems []jsontext.Value) ([]byte, error) {
	arr := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, e...)
	}
	arr = append(arr, ']')
	in, err := rawjson.SetMember(rawjson.Member(msg, outer), inner, arr)
	if err != nil {
		return nil, err
	}
	return rawjson.SetMember(msg, outer, in)
}

// Reply is the message the agent gets for a rejected request with id.
func (v Verdict) Reply(id jsontext.Value) []byte {
	if v.AskRoots {
		return rootsInputRequired(id)
	}
	if v.AsError {
		return message.RejectionError(id, v.Code, v.Rejection)
	}
	return message.RejectionResult(id, v.Rejection)
}
