// Package listing starts an MCP server with the official Go SDK client
// and reads what it shows the model: the initialize result and every
// page of tools/list (and, when asked, of prompts/list, resources/list
// and resources/templates/list), as the raw result objects the server
// sent. `mcpguard init` and `mcpguard check` read its tools, `mcpguard
// pin` all of it.
//
// What the server sends is not sanitised here: the bytes are kept as
// they came, so that a lock pins what the relay will be shown, and every
// consumer canonicalises what it prints or writes.
package listing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPages bounds the pages read of each list, so a server that hands
// out cursors forever cannot keep the command running until its timeout.
const maxPages = 100

// errNobody declines the requests a listing cannot answer: there is no
// person or model behind it.
var errNobody = errors.New("mcpguard does not answer sampling or elicitation while it lists a server")

// Options say what to list and how to run the server.
type Options struct {
	// All lists prompts, resources and resource templates too (those the
	// server announces); else only tools.
	All bool
	// Stderr receives the server's stderr.
	Stderr io.Writer
	// Version is mcpguard's, sent as clientInfo.
	Version string
}

// Listing is what a server showed: the raw result object of each
// response, in the order they came.
type Listing struct {
	// Initialize holds the initialize result (and any server/discover
	// result the SDK asked for).
	Initialize []jsontext.Value
	// Pages holds each list method's result pages, by method name
	// ("tools/list", ...).
	Pages map[string][]jsontext.Value
}

// List starts argv (no shell, in its own process group), initialises it
// with the Go SDK client, reads every page of what Options ask for, and
// stops the server and its process group. The client announces sampling
// and elicitation, so the server lists every tool a full agent would
// see, and declines those requests if they come; the SDK answers ping
// and roots/list.
func List(ctx context.Context, argv []string, o Options) (*Listing, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = o.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpguard", Version: o.Version}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errNobody
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errNobody
		},
	})
	rec := &recorder{methods: map[string]string{}, results: map[string][]jsontext.Value{}}
	transport := &recordingTransport{inner: &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, rec: rec}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		killGroup(cmd)
		return nil, fmt.Errorf("cannot start or initialize %q: %w", argv, err)
	}
	defer func() {
		cs.Close()
		killGroup(cmd) // npx and shell wrappers leave their children otherwise
	}()
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	// Tools are listed even when the server does not announce them (an
	// agent may ask all the same); only then may the list be refused.
	if err := pages("tools/list", func(c string) (string, error) {
		r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: c})
		if err != nil {
			return "", err
		}
		return r.NextCursor, nil
	}); err != nil && (caps.Tools != nil || ctx.Err() != nil) {
		return nil, err
	}
	if o.All && caps.Prompts != nil {
		if err := pages("prompts/list", func(c string) (string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: c})
			if err != nil {
				return "", err
			}
			return r.NextCursor, nil
		}); err != nil {
			return nil, err
		}
	}
	if o.All && caps.Resources != nil {
		if err := pages("resources/list", func(c string) (string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
			if err != nil {
				return "", err
			}
			return r.NextCursor, nil
		}); err != nil {
			return nil, err
		}
		if err := pages("resources/templates/list", func(c string) (string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
			if err != nil {
				return "", err
			}
			return r.NextCursor, nil
		}); err != nil {
			return nil, err
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	l := &Listing{Initialize: append(rec.results["initialize"], rec.results["server/discover"]...), Pages: map[string][]jsontext.Value{}}
	for method, res := range rec.results {
		if method != "initialize" && method != "server/discover" {
			l.Pages[method] = res
		}
	}
	return l, nil
}

// recorder keeps the raw result of each list and initialize response the
// client reads, so that a Listing holds the bytes the server sent, not
// the SDK's decoding of them.
type recorder struct {
	mcp.Connection
	mu      sync.Mutex
	methods map[string]string // request id → method
	results map[string][]jsontext.Value
}

// recorded are the methods whose results a Listing keeps.
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

// pages calls list with each cursor the server hands out, from none,
// until it hands out none or the one it was given, at most maxPages
// times.
func pages(method string, list func(cursor string) (next string, err error)) error {
	cursor := ""
	for n := 0; n < maxPages; n++ {
		nc, err := list(cursor)
		if err != nil {
			return fmt.Errorf("%s: %w", method, err)
		}
		if nc == "" || nc == cursor {
			return nil
		}
		cursor = nc
	}
	return fmt.Errorf("%s: more than %d pages", method, maxPages)
}

// killGroup ends whatever is left of the server's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Tools is the tools/list result {"tools":[...]} of every page, each
// tool's bytes as the server sent them: what `mcpguard init
// --save-tools-list` writes and eval --tools-list reads.
func (l *Listing) Tools() ([]byte, error) {
	out := []byte(`{"tools":[`)
	n := 0
	for _, page := range l.Pages["tools/list"] {
		var r struct {
			Tools []jsontext.Value `json:"tools"`
		}
		if err := json.Unmarshal(page, &r); err != nil {
			return nil, fmt.Errorf("tools/list result: %w", err)
		}
		for _, tool := range r.Tools {
			if n > 0 {
				out = append(out, ',')
			}
			out = append(out, tool...)
			n++
		}
	}
	return append(out, "]}"...), nil
}
