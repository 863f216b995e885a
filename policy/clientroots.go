package policy

import (
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/policy/message"
	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/codes"
)

// ErrBadRootsAnswer is RootsAnswer's error for an answer whose roots cannot
// be read: the relay refuses it rather than let the server read it.
var ErrBadRootsAnswer = errors.New("the client's roots/list answer has no readable roots array")

// ErrTooManyRoots is RootsAnswer's error for an answer that names more
// than maxClientRoots roots: the relay refuses it as it refuses
// ErrBadRootsAnswer.
var ErrTooManyRoots = errors.New("the client's roots/list answer names more than " + strconv.Itoa(maxClientRoots) + " roots")

// RootsAnswer judges the agent's answer to a roots/list request of the
// server. A client's roots replace the directories a server such as
// server-filesystem may touch, so an agent that answers with "/" would
// widen the server past every path_scope root of the policy. Each root
// must be a file: URI that a path_scope rule of the policy accepts as a
// whole (every reading of it inside one of that rule's roots); the others
// are removed from the answer, and each removal is a Rewrite for the log.
// The roots kept become bases against which path_scope reads relative
// paths from then on (the server reads them against its roots).
//
// A path_scope rule with client_roots: true accepts every root but "/"
// or a link to it (the client chooses the directories; the model does
// not), and those roots become its roots.
//
// A policy without path_scope rules has no roots to hold the answer to:
// it is relayed as it came. An error answer is relayed as it came. An
// answer without a readable roots array is refused (ErrBadRootsAnswer),
// so is one that names more than 256 (ErrTooManyRoots).
func (s *Session) RootsAnswer(m *message.Message) ([]byte, []Rewrite, error) {
	return s.now().rootsAnswer(m)
}

func (s judge) rootsAnswer(m *message.Message) ([]byte, []Rewrite, error) {
	scopes := s.policy().pathScopes()
	follows := s.policy().followsClient()
	if len(scopes) == 0 && !follows || m.Result == nil {
		return m.Raw, nil, nil
	}
	if memberKind(m.Result, "roots") != '[' {
		return nil, nil, ErrBadRootsAnswer
	}
	var kept []jsontext.Value
	var bases []string
	var rewrites []Rewrite
	err := eachArrayMember(m.Result, "roots", func(i int, v jsontext.Value) error {
		if i >= maxClientRoots {
			return ErrTooManyRoots
		}
		var root struct {
			URI string `json:"uri"`
		}
		if unmarshalLoose(v, &root) == nil {
			if path, ok := rootPath(root.URI); ok && (acceptedBySome(scopes, root.URI) || follows && !wholeTree(path)) {
				kept = append(kept, v)
				bases = append(bases, path)
				return nil
			}
		}
		rewrites = append(rewrites, Rewrite{Field: "result.roots[" + strconv.Itoa(i) + "]", Canonicaliser: "root_outside_policy", Removed: len(v)})
		return nil
	})
	if errors.Is(err, ErrTooManyRoots) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, ErrBadRootsAnswer
	}
	s.setClientRoots(bases)
	if len(rewrites) == 0 {
		return m.Raw, nil, nil
	}
	out, err := replaceMember(m.Raw, "result", "roots", kept)
	if err != nil {
		return nil, nil, ErrBadRootsAnswer
	}
	return out, rewrites, nil
}

func acceptedBySome(scopes []*rules.PathScope, uri string) bool {
	for _, ps := range scopes {
		if ps.Check(uri) == nil {
			return true
		}
	}
	return false
}

// rootPath is the absolute path a file: root URI names (file:///x,
// file://localhost/x), cleaned; ok is false for anything else.
func rootPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Host != "" && u.Host != "localhost" ||
		u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || !filepath.IsAbs(u.Path) {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

// wholeTree reports whether the directory d is "/" or a link to it
// (/proc/self/root, a link in the workspace): a client's root never
// opens the whole machine under client_roots, however it is spelled.
func wholeTree(d string) bool {
	if d == "/" {
		return true
	}
	real, err := filepath.EvalSymlinks(d)
	return err == nil && real == "/"
}

// pathScopes lists the path_scope checks of the policy's ingress rules.
func (p *Policy) pathScopes() []*rules.PathScope {
	var out []*rules.PathScope
	for _, r := range p.ingress {
		if ps, ok := r.check.(*rules.PathScope); ok {
			out = append(out, ps)
		}
	}
	return out
}

// followsClient reports whether a path_scope rule takes the client's
// directories as roots (client_roots: true).
func (p *Policy) followsClient() bool {
	return slices.ContainsFunc(p.ingress, func(r *ingressRule) bool { return r.clientRoots })
}

// setClientRoots records the directories of the client's last accepted
// roots/list answer.
func (s *Session) setClientRoots(bases []string) {
	s.clientRoots.Store(&bases)
	s.rescope()
}

// noRootsYet is the check of a path_scope rule whose only roots are the
// client's (client_roots: true without roots) before the session knows
// any: every path is refused.
type noRootsYet struct{}

func (noRootsYet) Check(string) *rules.Finding {
	return &rules.Finding{Code: codes.PathScope,
		Reason:      "path is outside the allowed roots: the client has given the server no directory (no roots/list answer, no directory in its command line)",
		Remediation: "Have the client announce its workspace roots (roots/list), or give the server its directory."}
}

// clientScopes are the checks of the session's client_roots rules, built
// from the rule's roots, the directories in the server's command line and
// those of the client's last accepted roots/list answer.
type clientScopes struct {
	check map[*ingressRule]rules.Check
	roots map[*ingressRule][]string
}

// scopesFor builds the checks of p's client_roots rules from what the
// session knows of the client's directories (nil when p has none). "/"
// is never such a root: an agent started in / with "." for its directory
// would open the whole machine.
func (s *Session) scopesFor(p *Policy) *clientScopes {
	if !p.followsClient() {
		return nil
	}
	var client []string
	if b := s.clientRoots.Load(); b != nil {
		client = *b
	}
	cs := &clientScopes{check: map[*ingressRule]rules.Check{}, roots: map[*ingressRule][]string{}}
	for _, r := range p.ingress {
		if !r.clientRoots {
			continue
		}
		roots := slices.Clone(r.roots)
		for _, d := range slices.Concat(s.serverDirs, client) {
			if !wholeTree(d) && !slices.Contains(roots, d) {
				roots = append(roots, d)
			}
		}
		cs.check[r], cs.roots[r] = r.check, r.roots
		if len(roots) > len(r.roots) {
			if ps, err := rules.NewPathScope(roots); err == nil {
				ps.Protect(p.ownFiles...)
				cs.check[r], cs.roots[r] = ps, roots
			}
		}
	}
	return cs
}

// rescope rebuilds the checks of the client_roots rules in force after
// the session learnt directories of the client's.
func (s *Session) rescope() {
	s.swap.Lock()
	defer s.swap.Unlock()
	in := *s.cur.Load()
	in.scopes = s.scopesFor(in.pol)
	s.cur.Store(&in)
}

// scopeFor is the check of a client_roots rule in this session.
func (s judge) scopeFor(r *ingressRule) rules.Check {
	if cs := s.in.scopes; cs != nil {
		if c := cs.check[r]; c != nil {
			return c
		}
	}
	return r.check
}

// rootsFor are the roots of a client_roots rule in this session.
func (s judge) rootsFor(r *ingressRule) []string {
	if cs := s.in.scopes; cs != nil {
		if c := cs.check[r]; c != nil {
			return cs.roots[r]
		}
	}
	return r.roots
}

// requestScope is the check and the roots of a client_roots rule for a
// request that carries the client's roots itself (protocol revision
// 2026-07-28: a client that never initializes answers the server's
// roots/list input request in the retried request's
// params.inputResponses, accepted by inputRoots): the rule's roots in
// this session and those, "/" never among them. They hold for that
// request only, as the server reads them: the next request names its
// own.
func (s judge) requestScope(r *ingressRule, carried []string) (rules.Check, []string) {
	known := s.rootsFor(r)
	roots := slices.Clone(known)
	for _, d := range carried {
		if !wholeTree(d) && !slices.Contains(roots, d) {
			roots = append(roots, d)
		}
	}
	if len(roots) > len(known) {
		if ps, err := rules.NewPathScope(roots); err == nil {
			ps.Protect(s.policy().ownFiles...)
			return ps, roots
		}
	}
	return s.scopeFor(r), known
}

// relativeBases is where the server may read a relative path besides the
// policy's own roots: the client's roots and the directories in the
// server's command line.
func (s *Session) relativeBases() []string {
	b := s.clientRoots.Load()
	switch {
	case b == nil || len(*b) == 0:
		return s.serverDirs
	case len(s.serverDirs) == 0:
		return *b
	}
	return append(slices.Clip(*b), s.serverDirs...)
}

// SetServerArgv records the server's command line, before the session is
// used: each directory in it (ServerDirs) becomes a base
// path_scope reads relative paths against. server-filesystem reads a
// relative path against each of the directories it was started with, so
// a server given $HOME behind a policy whose root is $HOME/src reads
// .ssh/id_rsa as $HOME/.ssh/id_rsa; judged against $HOME too, such a
// path is refused (every relative path is, when a directory of the
// server lies outside every root, and RootWarnings says so at start).
//
// For a path_scope rule with client_roots: true, those directories are
// roots as well: the agent wrote them in its config, expanded its
// variables (${workspaceFolder}) and started the server in its own
// working directory (".").
func (s *Session) SetServerArgv(argv []string) {
	s.serverDirs = ServerDirs(argv).Abs() // also for a reloaded policy's path_scope
	s.rescope()
}

// basedCheck is a check that reads relative values against extra bases
// (path_scope).
type basedCheck interface {
	CheckFrom(value string, bases []string) *rules.Finding
}

// maxClientRoots bounds the roots a client may name, in a roots/list
// answer or a retried request: each one is a root of a path_scope, built
// once per answer or request (deduplicated against the others) and
// searched for each path, so a message of a few hundred kilobytes
// naming tens of thousands of roots would hold the session for seconds.
// A workspace has a handful.
const maxClientRoots = 256

// inputRoots judges the roots answers a client carries in a retried
// request (protocol revision 2026-07-28: params.inputResponses, where a
// member with a roots array answers the server's roots/list input
// request). The server reads them as its roots for that request, so each
// must be accepted as RootsAnswer accepts a root; the request's bytes are
// not rewritten, so one root outside refuses the whole request. The roots
// accepted are returned as bases for relative paths in this request.
func (s judge) inputRoots(m *message.Message) ([]string, *message.Rejection) {
	if m.InputResponses.Kind() != '{' {
		return nil, nil
	}
	scopes := s.policy().pathScopes()
	follows := s.policy().followsClient()
	if len(scopes) == 0 && !follows {
		return nil, nil
	}
	var responses map[string]jsontext.Value
	if err := unmarshalLoose(m.InputResponses, &responses); err != nil {
		return nil, &message.Rejection{ErrorCode: codes.Malformed, Tool: clean(m.Name),
			Error: "rejected MCP input: params.inputResponses cannot be decoded", Remediation: "Send inputResponses as an object of results."}
	}
	var bases []string
	for _, resp := range responses {
		if memberKind(resp, "roots") == 0 {
			continue
		}
		var r struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		if err := unmarshalLoose(resp, &r); err != nil {
			return nil, &message.Rejection{ErrorCode: codes.Malformed, Tool: clean(m.Name),
				Error: "rejected MCP input: a roots answer in params.inputResponses cannot be decoded", Remediation: "Send roots as an array of {uri}."}
		}
		if len(bases)+len(r.Roots) > maxClientRoots {
			return nil, &message.Rejection{ErrorCode: codes.PathScope, Tool: clean(m.Name), Field: "inputResponses",
				Error:       "rejected MCP input: the roots answers in params.inputResponses name more than " + strconv.Itoa(maxClientRoots) + " roots",
				Remediation: "Answer roots/list with the workspace's directories only."}
		}
		for _, root := range r.Roots {
			path, ok := rootPath(root.URI)
			if !ok || !acceptedBySome(scopes, root.URI) && !(follows && !wholeTree(path)) {
				return nil, &message.Rejection{ErrorCode: codes.PathScope, Tool: clean(m.Name), Field: "inputResponses",
					Error:       "rejected MCP input: a roots answer in params.inputResponses names a root outside every path_scope root of the policy",
					Remediation: "Answer roots/list with directories inside the policy's roots."}
			}
			bases = append(bases, path)
		}
	}
	return bases, nil
}

// RootsKey is the inputRequests key under which mcpguard asks a client
// for its roots (Verdict.AskRoots).
const RootsKey = "mcpguard-roots"

// asksForRoots reports whether the request m, refused by rej, is rather
// to be answered with a request for the client's roots. A 2026-07-28
// client never initializes and is asked roots/list by no one before its
// first call: a path in its workspace is outside every root a
// client_roots rule knows until the client names them. So a first
// attempt (no inputResponses) from a client that declares the roots
// capability for the request (_meta
// io.modelcontextprotocol/clientCapabilities.roots), refused by a
// client_roots rule's path_scope, gets an input_required result with a
// roots/list input request under RootsKey (tools/call, prompts/get and
// resources/read: the requests the revision retries so); the client
// retries with its roots in params.inputResponses, which then hold for
// that request (inputRoots, requestScope), and a path outside them is
// refused. A retried request is never asked again, so no exchange loops.
func (s judge) asksForRoots(m *message.Message, rej *message.Rejection) bool {
	switch m.Method {
	case "tools/call", "prompts/get", "resources/read": // the requests 2026-07-28 retries with inputResponses
	default:
		return false
	}
	if rej.ErrorCode != codes.PathScope || memberKind(m.Params, "inputResponses") != 0 ||
		!slices.ContainsFunc(s.policy().ingress, func(r *ingressRule) bool { return r.clientRoots && r.rule == rej.Rule }) {
		return false
	}
	var p struct {
		Meta struct {
			Capabilities struct {
				Roots jsontext.Value `json:"roots"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	return unmarshalLoose(m.Params, &p) == nil && p.Meta.Capabilities.Roots.Kind() == '{'
}

// rootsInputRequired is the reply to request id that asks the client for
// its roots: a 2026-07-28 input_required result.
func rootsInputRequired(id jsontext.Value) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	return append(b, `,"result":{"resultType":"input_required","inputRequests":{"`+RootsKey+`":{"method":"roots/list","params":{}}}}}`...)
}
