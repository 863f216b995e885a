// Package pincmd is `mcpguard pin`: it starts an MCP server with the Go
// SDK client, lists every page of its tools, prompts, resources and
// resource templates, and writes the lock file of what the server shows
// the model (package pins) — or, with --diff, prints what changed since
// the lock, field by field, in canonical form (safe to print).
package pincmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/rules/lint"
)

// Options is one run of `mcpguard pin`.
type Options struct {
	Argv    []string // the server's command line
	Policy  string   // the policy file whose pins: names the lock file
	Lock    string   // the lock file to write or compare with (overrides the policy's)
	Diff    bool     // compare only; exit 1 when something changed
	Timeout time.Duration
	Stdout  io.Writer // the diff
	Stderr  io.Writer // the server's stderr, lint findings, the summary
}

// Run pins the server. The status is 0 on success (and, with Diff, when
// nothing changed), 1 when Diff found a change or the server could not be
// listed, 2 for usage and configuration errors (no lock file named, a
// policy or lock file that does not load).
func Run(opt Options) (status int, err error) {
	if len(opt.Argv) == 0 {
		return 2, errors.New("no server command: mcpguard pin [--policy FILE] -- COMMAND [ARGS...]")
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 60 * time.Second
	}
	if opt.Lock == "" && opt.Policy != "" {
		pol, err := policy.LoadFileWithoutLock(opt.Policy)
		if err != nil {
			return 2, err
		}
		if opt.Lock = pol.Pins; opt.Lock == "" {
			return 2, fmt.Errorf("%s has no pins: entry; add `pins: NAME.lock.yaml` to it, or pass --lock FILE", opt.Policy)
		}
	}
	if opt.Lock == "" {
		return 2, errors.New("no lock file: pass --policy FILE (with pins:) or --lock FILE")
	}
	var old *pins.Lock
	if l, err := pins.ReadLock(opt.Lock); err == nil {
		old = l
	} else if !errors.Is(err, pins.ErrNoLock) || opt.Diff {
		return 2, err
	}
	cur, findings, err := Snapshot(opt.Argv, opt.Stderr, opt.Timeout)
	if err != nil {
		return 1, err
	}
	for _, line := range findings {
		fmt.Fprintln(opt.Stderr, line)
	}
	if opt.Diff {
		if Diff(opt.Stdout, old, cur) {
			return 1, nil
		}
		fmt.Fprintf(opt.Stderr, "mcpguard: the server matches %s\n", opt.Lock)
		return 0, nil
	}
	changed := old == nil || Diff(io.Discard, old, cur)
	if !changed {
		fmt.Fprintf(opt.Stderr, "mcpguard: %s is up to date (%s)\n", opt.Lock, summary(cur))
		return 0, nil
	}
	if old != nil {
		Diff(opt.Stderr, old, cur)
	}
	if err := cur.WriteFile(opt.Lock); err != nil {
		return 1, err
	}
	fmt.Fprintf(opt.Stderr, "mcpguard: pinned %s in %s\n", summary(cur), opt.Lock)
	return 0, nil
}

func summary(l *pins.Lock) string {
	parts := []string{}
	for _, k := range []pins.Kind{pins.Tool, pins.Prompt, pins.Resource, pins.ResourceTemplate} {
		n, words := len(l.Items[k]), sectionWords(k)
		if n == 1 {
			words = strings.TrimSuffix(words, "s")
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, words))
	}
	if l.HasInstructions {
		parts = append(parts, "the instructions")
	}
	return strings.Join(parts, ", ")
}

func sectionWords(k pins.Kind) string {
	if k == pins.ResourceTemplate {
		return "resource templates"
	}
	return k.Section()
}

// recorder keeps the raw result of each list and initialize response the
// client reads, so that the lock pins the bytes the server sent, not the
// SDK's decoding of them.
type recorder struct {
	mcp.Connection
	mu      sync.Mutex
	methods map[string]string // request id → method
	results map[string][]jsontext.Value
}

var recorded = map[string]bool{"initialize": true, "server/discover": true, "tools/list": true, "prompts/list": true,
	"resources/list": true, "resources/templates/list": true}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (r *recorder) Write(ctx context.Context, m jsonrpc.Message) error {
	if req, ok := m.(*jsonrpc.Request); ok && req.ID.IsValid() && recorded[req.Method] {
		r.mu.Lock()
		r.methods[idKey(req.ID)] = req.Method
		r.mu.Unlock()
	}
	return r.Connection.Write(ctx, m)
}

func (r *recorder) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := r.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil && resp.Error == nil {
		r.mu.Lock()
		if method, ok := r.methods[idKey(resp.ID)]; ok {
			delete(r.methods, idKey(resp.ID))
			r.results[method] = append(r.results[method], jsontext.Value(slices.Clone(resp.Result)))
		}
		r.mu.Unlock()
	}
	return m, err
}

type recordingTransport struct {
	inner mcp.Transport
	rec   *recorder
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.rec.Connection = c
	return t.rec, nil
}

// Snapshot starts argv, lists everything it shows the model, stops it, and
// returns it as a lock, with a line for each item that has lint findings.
func Snapshot(argv []string, stderr io.Writer, timeout time.Duration) (*pins.Lock, []string, error) {
	if len(argv) == 0 {
		return nil, nil, errors.New("no server command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	rec := &recorder{methods: map[string]string{}, results: map[string][]jsontext.Value{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpguard-pin", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &recordingTransport{inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, rec: rec}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot start or initialize %q: %w", argv, err)
	}
	defer cs.Close()
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	if caps.Tools != nil {
		for _, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return nil, nil, fmt.Errorf("tools/list: %w", err)
			}
		}
	}
	if caps.Prompts != nil {
		for _, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				return nil, nil, fmt.Errorf("prompts/list: %w", err)
			}
		}
	}
	if caps.Resources != nil {
		for _, err := range cs.Resources(ctx, nil) {
			if err != nil {
				return nil, nil, fmt.Errorf("resources/list: %w", err)
			}
		}
		for _, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return nil, nil, fmt.Errorf("resources/templates/list: %w", err)
			}
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return lockOf(rec.results)
}

// lockOf builds a lock from the raw results of initialize and the lists,
// and lints what the server sent (before canonicalisation, which would
// remove the hidden text that lint reports).
func lockOf(results map[string][]jsontext.Value) (*pins.Lock, []string, error) {
	l := pins.NewLock()
	var report []string
	inits := append(results["initialize"], results["server/discover"]...)
	for _, res := range inits {
		var info jsontext.Value
		err := eachMember(res, func(name string, v jsontext.Value) error {
			switch name {
			case "instructions":
				if v.Kind() == '"' {
					tok, err := jsontext.NewDecoder(strings.NewReader(string(v))).ReadToken()
					if err != nil {
						return err
					}
					l.Instructions, l.HasInstructions = canonText(tok.String()), true
					if fs := lint.Instructions(tok.String()); len(fs) > 0 {
						report = append(report, "mcpguard: lint: instructions: "+findings(fs))
					}
				}
			case "serverInfo":
				info = v
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("initialize result: %w", err)
		}
		if info != nil {
			d, err := pins.Canonical(info)
			if err != nil {
				return nil, nil, fmt.Errorf("serverInfo: %w", err)
			}
			l.ServerInfo = &d
		}
	}
	for _, k := range []pins.Kind{pins.Tool, pins.Prompt, pins.Resource, pins.ResourceTemplate} {
		for _, res := range results[k.ListMethod()] {
			err := eachMember(res, func(name string, v jsontext.Value) error {
				if name != k.Section() || v.Kind() != '[' {
					return nil
				}
				return eachElement(v, func(item jsontext.Value) error {
					d, err := pins.Canonical(item)
					if err != nil {
						return fmt.Errorf("%s: %w", k.ListMethod(), err)
					}
					key := d.String(k.KeyField())
					if key == "" {
						return fmt.Errorf("%s: a %s without a %s", k.ListMethod(), k, k.KeyField())
					}
					if _, dup := l.Items[k][key]; !dup { // the relay keeps the first too
						l.Items[k][key] = d
						if fs := lint.Item(item); len(fs) > 0 {
							report = append(report, "mcpguard: lint: "+k.String()+" "+quote(key)+": "+findings(fs))
						}
					}
					return nil
				})
			})
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return l, report, nil
}

func eachMember(obj jsontext.Value, fn func(name string, v jsontext.Value) error) error {
	d := jsontext.NewDecoder(bytes.NewBuffer(obj)) // values stay valid: they point into obj
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return errors.New("not a JSON object")
	}
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		if err := fn(name, v); err != nil {
			return err
		}
	}
	return nil
}

func eachElement(arr jsontext.Value, fn func(v jsontext.Value) error) error {
	d := jsontext.NewDecoder(bytes.NewBuffer(arr)) // values stay valid: they point into arr
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	for d.PeekKind() != ']' {
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// canonText is the text canonicaliser applied to instructions, as the
// session compares them.
func canonText(s string) string {
	d, err := pins.Canonical([]byte(`{"s":` + quote(s) + `}`))
	if err != nil {
		return s
	}
	return d.String("s")
}

func quote(s string) string {
	q, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		q, _ = jsontext.AppendQuote(nil, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return string(q)
}

// Diff writes what changed from old to cur, field by field, and reports
// whether anything did. Every value printed is canonical text.
func Diff(w io.Writer, old, cur *pins.Lock) bool {
	changed := false
	if old.HasInstructions != cur.HasInstructions || old.Instructions != cur.Instructions {
		changed = true
		fmt.Fprintln(w, "instructions: changed")
		if old.HasInstructions {
			fmt.Fprintf(w, "  - %s\n", quote(old.Instructions))
		}
		if cur.HasInstructions {
			fmt.Fprintf(w, "  + %s\n", quote(cur.Instructions))
		}
	}
	switch {
	case old.ServerInfo == nil && cur.ServerInfo != nil:
		changed = true
		fmt.Fprintf(w, "serverInfo: new\n  + %s\n", cur.ServerInfo.Text())
	case old.ServerInfo != nil && cur.ServerInfo == nil:
		changed = true
		fmt.Fprintln(w, "serverInfo: removed")
	case old.ServerInfo != nil && old.ServerInfo.Digest() != cur.ServerInfo.Digest():
		changed = true
		fmt.Fprintln(w, "serverInfo: changed")
		diffFields(w, *old.ServerInfo, *cur.ServerInfo)
	}
	for _, k := range []pins.Kind{pins.Tool, pins.Prompt, pins.Resource, pins.ResourceTemplate} {
		keys := map[string]bool{}
		for key := range old.Items[k] {
			keys[key] = true
		}
		for key := range cur.Items[k] {
			keys[key] = true
		}
		sorted := make([]string, 0, len(keys))
		for key := range keys {
			sorted = append(sorted, key)
		}
		sort.Strings(sorted)
		for _, key := range sorted {
			o, inOld := old.Items[k][key]
			c, inCur := cur.Items[k][key]
			switch {
			case !inOld:
				changed = true
				fmt.Fprintf(w, "%s %s: new (not in the lock)\n  + %s\n", k, quote(key), c.Text())
			case !inCur:
				changed = true
				fmt.Fprintf(w, "%s %s: removed\n", k, quote(key))
			case o.Digest() != c.Digest():
				changed = true
				fmt.Fprintf(w, "%s %s: changed\n", k, quote(key))
				diffFields(w, o, c)
			}
		}
	}
	return changed
}

func diffFields(w io.Writer, old, cur pins.Definition) {
	for _, f := range pins.ChangedFields(old, cur) {
		fmt.Fprintf(w, "  %s:\n", quote(f))
		if v, ok := old.Fields[f]; ok {
			fmt.Fprintf(w, "    - %s\n", v)
		}
		if v, ok := cur.Fields[f]; ok {
			fmt.Fprintf(w, "    + %s\n", v)
		}
	}
}

func findings(fs []lint.Finding) string { return lint.Join(fs) }
