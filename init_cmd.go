package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/urfave/cli/v2"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/starter"
	"github.com/mcpguard/mcpguard/proxy"
)

// initCommand is `mcpguard init [--out FILE] -- COMMAND [ARGS...]`: start
// the server through the relay (baseline policy, so its tool list arrives
// canonicalised), list its tools, stop it, and print a starter policy.
// serverArgv is everything after "--".
func initCommand(stdin io.Reader, stdout, stderr io.Writer, serverArgv []string, status *int) *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "start the server, list its tools, print a starter policy",
		UsageText: "mcpguard init [--out FILE] [--force] [--timeout D] -- COMMAND [ARGS...]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the policy to `FILE` instead of stdout"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out FILE if it exists"},
			&cli.DurationFlag{Name: "timeout", Usage: "how long the server gets to list its tools", Value: 60 * time.Second},
		},
		Action: func(c *cli.Context) error {
			argv := serverArgv
			switch {
			case len(argv) > 0 && c.NArg() > 0:
				return usagef("unexpected arguments before --: %q", c.Args().Slice())
			case len(argv) == 0:
				argv = c.Args().Slice()
			}
			if len(argv) == 0 {
				return usagef("no server command: mcpguard init [--out FILE] -- COMMAND [ARGS...]")
			}
			out := c.String("out")
			if out != "" && !c.Bool("force") {
				if _, err := os.Stat(out); err == nil {
					return usagef("%s exists; pass --force to overwrite it", out)
				}
			}
			tools, err := listTools(argv, stderr, c.Duration("timeout"))
			if err != nil {
				return cli.Exit(fmt.Sprintf("init: %v", err), 1)
			}
			text, err := starter.Generate(tools, argv, starter.Options{Roots: starter.DirRoots(argv), Date: time.Now()})
			if err != nil {
				return cli.Exit(fmt.Sprintf("init: %v", err), 1)
			}
			// The promise is a policy that passes `mcpguard check`; hold
			// ourselves to it before anyone relies on the file.
			if _, err := policy.Load("starter policy", text, lookupWithPWD); err != nil {
				return cli.Exit(fmt.Sprintf("init: the starter policy does not load (a bug in mcpguard):\n%v", err), 1)
			}
			if out == "" {
				_, err = stdout.Write(text)
			} else {
				err = os.WriteFile(out, text, 0o644)
			}
			if err != nil {
				return cli.Exit(fmt.Sprintf("init: %v", err), 1)
			}
			where := "stdout"
			if out != "" {
				where = out
			}
			fmt.Fprintf(stderr, "mcpguard: starter policy written to %s (mode: audit); review it, try calls with `mcpguard eval`, then switch to enforce\n", where)
			*status = 0
			return nil
		},
	}
}

// lookupWithPWD is os.LookupEnv, with PWD falling back to the working
// directory: the starter's default root is ${PWD}.
func lookupWithPWD(name string) (string, bool) {
	if v, ok := os.LookupEnv(name); ok || name != "PWD" {
		return v, ok
	}
	wd, err := os.Getwd()
	return wd, err == nil
}

// initProtocol is the revision init asks for; a server that answers
// initialize with -32601 (2026-07-28 and later) is asked server/discover.
const (
	initProtocol      = "2025-06-18"
	discoverProtocol  = "2026-07-28"
	maxToolsListPages = 100
)

// rpcResponse is a message read from the relay: a response to init's
// request, or a request or notification from the server.
type rpcResponse struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcError is a JSON-RPC error answer from the server.
type rpcError struct {
	method  string
	code    int64
	message string
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s: server answered error %d: %s", e.method, e.code, e.message)
}

// initClient speaks just enough MCP to list a server's tools, through the
// relay running in the same process.
type initClient struct {
	toRelay  *io.PipeWriter
	lines    <-chan []byte
	deadline <-chan time.Time
	nextID   int64
	meta     map[string]any // 2026-07-28: per-request _meta
}

// listTools starts argv behind the relay with the baseline policy, lists
// every page of its tools, stops the server, and returns one tools/list
// result object {"tools":[...]}.
func listTools(argv []string, stderr io.Writer, timeout time.Duration) ([]byte, error) {
	agentR, agentW := io.Pipe()   // init → relay (the agent's stdout)
	serverR, serverW := io.Pipe() // relay → init
	exited := make(chan int, 1)
	go func() {
		st := proxy.Run(proxy.Config{Argv: argv, Policy: policy.Baseline(), Stdin: agentR, Stdout: serverW, Stderr: stderr})
		serverW.Close()
		// Nobody reads the agent's side any more: writes to it must fail,
		// not block (the server may not even have started).
		agentR.CloseWithError(errors.New("the relay has stopped"))
		exited <- st
	}()
	lines := make(chan []byte, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(serverR)
		sc.Buffer(make([]byte, 64*1024), proxy.DefaultMaxResponseBytes+1)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		// Keep draining so the relay never blocks on a full pipe.
		io.Copy(io.Discard, serverR)
	}()
	c := &initClient{toRelay: agentW, lines: lines, deadline: time.After(timeout)}
	tools, err := c.session()

	// Closing the agent's side makes the relay close the server's stdin,
	// wait its grace period, then signal the process group.
	agentW.Close()
	select {
	case st := <-exited:
		if st == 127 {
			err = errors.New("the server could not be started (see above)")
		}
	case <-time.After(3*proxy.DefaultGrace + 5*time.Second):
		fmt.Fprintln(stderr, "mcpguard: init: the server did not stop in time")
	}
	if err != nil {
		return nil, err
	}
	return tools, nil
}

// session runs the handshake and the tools/list pages.
func (c *initClient) session() ([]byte, error) {
	clientInfo := map[string]any{"name": "mcpguard-init", "version": version}
	// Announce what a full agent would, so the server lists every tool it
	// may offer one (server-everything adds tools for roots and sampling).
	caps := map[string]any{"roots": map[string]any{"listChanged": true}, "sampling": map[string]any{}, "elicitation": map[string]any{}}
	_, err := c.call("initialize", map[string]any{"protocolVersion": initProtocol, "capabilities": caps, "clientInfo": clientInfo})
	var rerr *rpcError
	switch {
	case errors.As(err, &rerr) && rerr.code == -32601:
		c.meta = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    discoverProtocol,
			"io.modelcontextprotocol/clientInfo":         clientInfo,
			"io.modelcontextprotocol/clientCapabilities": caps,
		}
		if _, err := c.call("server/discover", map[string]any{}); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
			return nil, err
		}
	}
	var all []jsontext.Value
	cursor := ""
	for page := 0; ; page++ {
		if page == maxToolsListPages {
			return nil, fmt.Errorf("tools/list: more than %d pages", maxToolsListPages)
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := c.call("tools/list", params)
		if err != nil {
			return nil, err
		}
		var r struct {
			Tools      []jsontext.Value `json:"tools"`
			NextCursor string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, fmt.Errorf("tools/list: %v", err)
		}
		all = append(all, r.Tools...)
		if r.NextCursor == "" || r.NextCursor == cursor {
			break
		}
		cursor = r.NextCursor
	}
	if all == nil {
		all = []jsontext.Value{}
	}
	return json.Marshal(map[string]any{"tools": all})
}

func (c *initClient) send(msg map[string]any) error {
	b, err := json.Marshal(msg, json.Deterministic(true))
	if err != nil {
		return err
	}
	_, err = c.toRelay.Write(append(b, '\n'))
	return err
}

// call sends a request and waits for its response, answering what the
// server asks meanwhile.
func (c *initClient) call(method string, params map[string]any) (jsontext.Value, error) {
	c.nextID++
	id := c.nextID
	if c.meta != nil {
		params["_meta"] = c.meta
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %v", method, err)
	}
	want := fmt.Sprint(id)
	for {
		var line []byte
		var ok bool
		select {
		case line, ok = <-c.lines:
			if !ok {
				return nil, fmt.Errorf("%s: the server exited before answering", method)
			}
		case <-c.deadline:
			return nil, fmt.Errorf("%s: no answer in time", method)
		}
		var m rpcResponse
		if err := json.Unmarshal(line, &m); err != nil {
			continue // the relay forwards only valid JSON; be lenient about the rest
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			if err := c.answer(m); err != nil {
				return nil, err
			}
		case m.Method != "":
			// a notification (logging, list_changed): nothing to do
		case string(m.ID) == want:
			if m.Error != nil {
				return nil, &rpcError{method: method, code: m.Error.Code, message: m.Error.Message}
			}
			return m.Result, nil
		}
	}
}

// answer replies to a request from the server: no roots, pings answered,
// and sampling or elicitation declined, since nobody is there to answer.
func (c *initClient) answer(m rpcResponse) error {
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	switch m.Method {
	case "roots/list":
		reply["result"] = map[string]any{"roots": []any{}}
	case "ping":
		reply["result"] = map[string]any{}
	default:
		reply["error"] = map[string]any{"code": -32601, "message": "mcpguard init does not answer " + m.Method}
	}
	return c.send(reply)
}
