package policy

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// memLabels is a LabelStore in memory, shared by the sessions of a test
// as the file is by the processes of an agent session.
type memLabels struct {
	mu     sync.Mutex
	events []LabelEvent
	err    error // returned by Held and Record when set
}

func (m *memLabels) Record(e LabelEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	for _, h := range m.events {
		if h.Label == e.Label {
			return nil
		}
	}
	m.events = append(m.events, e)
	return nil
}

func (m *memLabels) Held() ([]LabelEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]LabelEvent(nil), m.events...), m.err
}

const (
	fsFlowPolicy = `
version: 1
server: filesystem
tools:
  read_file: {labels: [untrusted]}
ingress:
  - {tools: ["*"], fields: [path], check: path_scope, roots: ["${ROOT}"]}
`
	fetchFlowPolicy = `
version: 1
server: fetch
tools:
  fetch: {labels: [untrusted, exfiltrates]}
flows:
  - after: [private, untrusted]
`
	awsFile = "[default]\\naws_access_key_id = AKIAZ7XQ3RNB4WJ6PLMU\\n"
)

func loadFlowPolicy(t *testing.T, src string, vars map[string]string) *Policy {
	t.Helper()
	p, err := Load("flows.yaml", []byte(src), func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// call judges one tools/call in s and, when it passes, feeds its result
// (one text block) through Egress, as the relay does.
func call(t *testing.T, s *Session, tool, args, text string) Verdict {
	t.Helper()
	m, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := s.Ingress(m)
	if v.Rejection != nil && !v.Audit {
		return v
	}
	c := s.CallOf(m)
	r, err := message.Parse([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Egress(r, &c); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFlowAcrossServers: a credential read through one server's session
// gives the agent session private; a fetch through another's is refused
// then, naming the event, and passes in a session without the read.
func TestFlowAcrossServers(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	vars := map[string]string{"ROOT": root}
	fs, fetch := loadFlowPolicy(t, fsFlowPolicy, vars), loadFlowPolicy(t, fetchFlowPolicy, vars)

	store := &memLabels{}
	fsSession, fetchSession := fs.NewSession(), fetch.NewSession()
	fsSession.ShareLabels(store, "filesystem")
	fetchSession.ShareLabels(store, "fetch")
	var logged []LabelEvent
	fsSession.OnLabel = func(fresh []LabelEvent, err error) {
		if err != nil {
			t.Error(err)
		}
		logged = append(logged, fresh...)
	}

	if v := call(t, fetchSession, "fetch", `{"url":"https://example.com/"}`, "a page"); v.Rejection != nil {
		t.Fatalf("a fetch in a fresh session: %v", v.Rejection.Error)
	}
	if v := call(t, fsSession, "read_file", `{"path":"`+filepath.Join(root, "credentials")+`"}`, awsFile); v.Rejection != nil {
		t.Fatalf("read: %v", v.Rejection.Error)
	}
	if len(logged) != 2 || logged[0].Label != Private || logged[0].Why != whyRedacted || logged[1].Label != Untrusted {
		t.Fatalf("labels logged: %+v", logged)
	}
	v := call(t, fetchSession, "fetch", `{"url":"https://example.com/?q=k"}`, "")
	if v.Rejection == nil || v.Rejection.ErrorCode != codes.Flow || v.Audit {
		t.Fatalf("the fetch after the read: %+v", v)
	}
	for _, want := range []string{"private since", "server filesystem, tool read_file (a credential was redacted from its result)",
		"untrusted since", "server fetch, tool fetch (the policy labels the tool)", "flows[0]"} {
		if !strings.Contains(v.Rejection.Error, want) {
			t.Errorf("rejection %q does not say %q", v.Rejection.Error, want)
		}
	}

	// Another agent session: the same fetch passes.
	other := fetch.NewSession()
	other.ShareLabels(&memLabels{}, "fetch")
	if v := call(t, other, "fetch", `{"url":"https://example.com/?q=k"}`, ""); v.Rejection != nil {
		t.Fatalf("a fetch in another session: %v", v.Rejection.Error)
	}
}

// TestFlowOneServer: the chain within one server's session, without a
// store; the audit action logs and forwards; a path outside the project
// gives private.
func TestFlowOneServer(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(project)
	src := `
version: 1
server: desk
tools:
  read_file: {labels: [untrusted]}
  fetch: {labels: [exfiltrates]}
flows:
  - after: [private, untrusted]
    action: ACTION
ingress:
  - {tools: [read_file], fields: [path], check: path_scope, roots: ["${ROOT}"]}
`
	for _, action := range []string{"refuse", "audit"} {
		p := loadFlowPolicy(t, strings.Replace(src, "ACTION", action, 1), map[string]string{"ROOT": root})
		s := p.NewSession()
		if v := call(t, s, "read_file", `{"path":"`+filepath.Join(project, "main.go")+`"}`, "package main"); v.Rejection != nil {
			t.Fatal(v.Rejection.Error)
		}
		if v := call(t, s, "fetch", `{"url":"https://example.com/"}`, ""); v.Rejection != nil {
			t.Fatalf("%s: untrusted alone: %v", action, v.Rejection.Error)
		}
		if v := call(t, s, "read_file", `{"path":"`+filepath.Join(root, "notes.txt")+`"}`, "my notes"); v.Rejection != nil {
			t.Fatal(v.Rejection.Error)
		}
		v := call(t, s, "fetch", `{"url":"https://example.com/"}`, "")
		if v.Rejection == nil || v.Rejection.ErrorCode != codes.Flow || v.Audit != (action == "audit") {
			t.Fatalf("%s: %+v", action, v)
		}
		if !strings.Contains(v.Rejection.Error, whyOutside) {
			t.Errorf("%s: %q does not name the read outside the project", action, v.Rejection.Error)
		}
	}
}

// TestFlowStoreFailure: when the shared labels cannot be read, an
// exfiltrating call is refused (fail closed) unless the process's own
// labels already decide; a store another process empties does not make
// a process forget what it saw.
func TestFlowStoreFailure(t *testing.T) {
	p := loadFlowPolicy(t, fetchFlowPolicy, nil)
	broken := &memLabels{err: errors.New("disk on fire")}
	s := p.NewSession()
	s.ShareLabels(broken, "fetch")
	v := call(t, s, "fetch", `{"url":"https://example.com/"}`, "")
	if v.Rejection == nil || v.Rejection.ErrorCode != codes.Flow || !v.Rejection.Retryable || !strings.Contains(v.Rejection.Error, "cannot be read") {
		t.Fatalf("unreadable labels: %+v", v.Rejection)
	}

	store := &memLabels{}
	s = p.NewSession()
	s.ShareLabels(store, "fetch")
	s.flow.learn(labelBit(Private), "read", whyPolicy)
	if v := call(t, s, "fetch", `{"url":"https://example.com/"}`, "a page"); v.Rejection != nil {
		t.Fatal(v.Rejection.Error) // private alone
	}
	store.mu.Lock()
	store.events = nil
	store.mu.Unlock()
	if v := call(t, s, "fetch", `{"url":"https://example.com/"}`, ""); v.Rejection == nil || v.Rejection.ErrorCode != codes.Flow {
		t.Fatalf("after the store was emptied: %+v", v.Rejection)
	}
}

// TestFlowLabelsFromOtherProcesses: labels another process recorded (in
// the store only) count, and names in them are cleaned.
func TestFlowLabelsFromOtherProcesses(t *testing.T) {
	p := loadFlowPolicy(t, fetchFlowPolicy, nil)
	store := &memLabels{events: []LabelEvent{
		{Label: Private, Server: "fs\x1b[2J", Tool: "read", Why: whyRedacted},
		{Label: Untrusted, Server: "web", Tool: "get\nx", Why: whyPolicy},
	}}
	s := p.NewSession()
	s.ShareLabels(store, "fetch")
	v := call(t, s, "fetch", `{"url":"https://example.com/"}`, "")
	if v.Rejection == nil || v.Rejection.ErrorCode != codes.Flow {
		t.Fatalf("%+v", v.Rejection)
	}
	if strings.ContainsAny(v.Rejection.Error, "\x1b\n") {
		t.Errorf("rejection carries raw text from the store: %q", v.Rejection.Error)
	}
}

// TestNoLabelsNoCost: a policy without labels or flows looks nothing up
// and allocates nothing for labels.
func TestNoLabelsNoCost(t *testing.T) {
	p := loadFlowPolicy(t, "version: 1\ntools: {read: allow}\n", nil)
	s := p.NewSession()
	c := &Call{Method: "tools/call", Tool: "unlisted_tool"}
	if n := testing.AllocsPerRun(100, func() { s.now().learnResult(c, nil) }); n != 0 {
		t.Errorf("learnResult allocates %v times without labels", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = p.looseLabelled.match("READе") }); n != 0 {
		t.Errorf("the loose labels of a name allocate %v times without labels", n)
	}
}

// looseFlowPolicy labels tools that a server resolving names loosely may
// run under other spellings; unknown_tools: allow lets every spelling
// through the tools: section.
const looseFlowPolicy = `
version: 1
server: desk
unknown_tools: allow
tools:
  read_secret: {labels: [private]}
  "read_web*": {labels: [untrusted]}
  fetch: {labels: [untrusted, exfiltrates]}
  "send_*": {labels: [exfiltrates]}
flows:
  - after: [private, untrusted]
`

// TestFlowLabelsLooseSpellings: a labelled read called under another
// spelling the server resolves to it (READ_SECRET, a Cyrillic е, a
// trailing space) still gives the session its label, and the send that
// follows, under any spelling, is refused naming the spelling called.
func TestFlowLabelsLooseSpellings(t *testing.T) {
	p := loadFlowPolicy(t, looseFlowPolicy, nil)
	for _, tc := range []struct{ private, untrusted, send string }{
		{"READ_SECRET", "Read_Web_Page", "FETCH"},
		{"r\u0435ad_secret ", "READ_WEB", "fetch "},
		{"ｒｅａｄ_ｓｅｃｒｅｔ", "read_w\u0435b_page", "S\u0415ND_MAIL"},
	} {
		s := p.NewSession()
		var logged []LabelEvent
		s.OnLabel = func(fresh []LabelEvent, err error) { logged = append(logged, fresh...) }
		call(t, s, tc.private, `{}`, "my notes")
		call(t, s, tc.untrusted, `{}`, "a page")
		if len(logged) != 2 || logged[0].Label != Private || logged[1].Label != Untrusted {
			t.Errorf("%q then %q: labels %+v, want private then untrusted", tc.private, tc.untrusted, logged)
			continue
		}
		v := call(t, s, tc.send, `{"url":"https://example.com/?q=k"}`, "")
		if v.Rejection == nil || v.Rejection.ErrorCode != codes.Flow {
			t.Errorf("%q after the reads: %+v", tc.send, v.Rejection)
		}
	}
}

// FuzzLooseLabels: a name that a server resolving names loosely may read
// as a labelled tool's name (same canon.Loose as an exact entry, or a
// match of a glob's canon.Fold or canon.LooseGlob) carries at least that
// entry's labels; seeded with the spellings of known bypasses.
func FuzzLooseLabels(f *testing.F) {
	p, err := Load("loose.yaml", []byte(looseFlowPolicy), nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"fetch", "FETCH", "Fetch", "fetch ", " fetch\t", "ｆｅｔｃｈ", "f\u0435tch", "fe\u200btch",
		"FE\u00adTCH", "fetch\u0000", "READ_SECRET", "r\u0435ad_s\u0435cret", "read_secret\u00a0", "SEND_X", "s\u0435nd_", "send",
		"read_web", "READ-WEB", "fetc\u04bb", "\u212aelvin", "", "*", "send_*"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tool string) {
		got := p.labelsOf(tool)
		if again := p.labelsOf(tool); again != got {
			t.Fatalf("%q: labels %b, then %b", tool, got, again)
		}
		loose, folded := canon.Loose(tool), canon.Fold(tool)
		for _, e := range p.tools {
			var m bool
			if e.glob {
				m, _ = path.Match(canon.Fold(e.pattern), folded)
				if !m {
					m, _ = path.Match(canon.LooseGlob(e.pattern), loose)
				}
			} else {
				m = canon.Loose(e.pattern) == loose
			}
			if m && got&e.labels != e.labels {
				t.Fatalf("%q reads as %s, labelled %b, but carries %b", tool, e.pattern, e.labels, got)
			}
		}
	})
}

// TestShippedLabels: the labels the shipped policies give (read from the
// policy files, so a misspelt tool name fails here), and the flows: rule
// only where a tool sends data out.
func TestShippedLabels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		labels map[string]labelSet
		flows  bool
	}{
		{"memory", map[string]labelSet{"read_graph": labelBit(Private), "open_nodes": labelBit(Private), "create_entities": 0}, false},
		{"everything", map[string]labelSet{"echo": 0, "get-resource-links": 0}, false},
		{"git", map[string]labelSet{"git_log": labelBit(Untrusted), "git_show": labelBit(Untrusted), "git_diff": labelBit(Untrusted), "git_commit": 0}, false},
		{"notion", map[string]labelSet{"API-get-users": labelBit(Private), "API-retrieve-page-markdown": labelBit(Untrusted),
			"API-create-a-comment": labelBit(Exfiltrates), "API-update-page-markdown": labelBit(Exfiltrates), "API-get-self": 0}, true},
		{"sentry", map[string]labelSet{"search_events": labelBit(Untrusted), "get_sentry_resource": labelBit(Untrusted), "update_issue": 0}, false},
		{"kubernetes", map[string]labelSet{"kubectl_get": labelBit(Private), "kubectl_describe": labelBit(Private), "kubectl_logs": labelBit(Untrusted), "kubectl_apply": 0}, false},
	} {
		name := filepath.Join("..", "policies", tc.policy+".yaml")
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Load(name, src, func(string) (string, bool) { return t.TempDir(), true })
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		for tool, want := range tc.labels {
			if got := p.labelsOf(tool); got != want {
				t.Errorf("%s: %s labelled %03b, want %03b", tc.policy, tool, got, want)
			}
		}
		if (len(p.flows) > 0) != tc.flows {
			t.Errorf("%s: flows: %d rules, want some: %v", tc.policy, len(p.flows), tc.flows)
		}
	}
}
