// Command mcpguard is a firewall for the tools of AI agents: it runs in
// front of an MCP server that speaks stdio, checks every request against a
// YAML policy, canonicalises what the server sends back, and logs every
// decision. See README.md.
//
// This file only wires the command line (urfave/cli) to the packages that
// do the work: the libraries return values (reports, verdicts, locks,
// errors), and each command body here reads its flags, calls them, writes
// what they return to stdout or stderr, and returns its exit status. The
// bodies follow app() in the order of its commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/mcpguard/mcpguard/policies"
	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/pins"
	"github.com/mcpguard/mcpguard/policy/starter"
	"github.com/mcpguard/mcpguard/proxy"
	"github.com/mcpguard/mcpguard/proxy/agentconfig"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
	"github.com/mcpguard/mcpguard/proxy/listing"
	"github.com/mcpguard/mcpguard/proxy/telemetry"
	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/lint"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// splitArgv separates mcpguard's own words from the server's command line
// at the first "--": everything after it is the server's argv, even a word
// that names a subcommand (`mcpguard -- help` runs a program called help).
func splitArgv(args []string) (own, server []string, dashdash bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

// run is the whole program: it returns the exit status. Commands report
// (status, err); an error is printed once, to stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	own, serverArgv, dashdash := splitArgv(args)
	cmd := &command{stdin: stdin, stdout: stdout, stderr: stderr, serverArgv: serverArgv, dashdash: dashdash}
	if err := cmd.app().Run(own); err != nil {
		cmd.fail(2, err) // flag parsing errors from cli are usage errors
	}
	if cmd.err != nil {
		fmt.Fprintf(stderr, "mcpguard: %v\n", cmd.err)
	}
	return cmd.status
}

// command carries one invocation's streams and outcome.
type command struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	serverArgv     []string // after "--"
	dashdash       bool
	status         int
	err            error
}

func (c *command) fail(status int, err error) {
	c.status, c.err = status, err
}

// action adapts a command body that returns (status, err) to urfave/cli.
func (c *command) action(body func(*cli.Context) (int, error)) cli.ActionFunc {
	return func(ctx *cli.Context) error {
		c.status, c.err = body(ctx)
		return nil
	}
}

// argv is the server's command line: after "--", or the positional
// arguments when there is no "--" and none of them is one of mcpguard's
// own flags (see misplacedFlags).
func (c *command) argv(ctx *cli.Context) ([]string, error) {
	if !c.dashdash {
		argv := ctx.Args().Slice()
		if len(argv) > 0 {
			cmd, flags := "", ctx.App.Flags
			if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != ctx.App.Name {
				cmd, flags = ctx.Command.Name, ctx.Command.Flags
			}
			if err := misplacedFlags(cmd, argv, flags); err != nil {
				return nil, err
			}
		}
		return argv, nil
	}
	if ctx.Args().Len() > 0 {
		return nil, fmt.Errorf("unexpected arguments before --: %q", ctx.Args().Slice())
	}
	return c.serverArgv, nil
}

func (c *command) app() *cli.App {
	runFlags := []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` (YAML); default: the embedded baseline policy"},
		&cli.StringFlag{Name: "log", Usage: "decision log `FILE`, or - for stderr", Value: eventlog.DefaultPath(), DefaultText: "$XDG_STATE_HOME/mcpguard/mcpguard.log"},
		&cli.GenericFlag{Name: "log-max-bytes", Usage: "rotate the log when it would grow past this size (bytes, or 8MiB, 512KiB)",
			Value: &byteSize{int(eventlog.DefaultRotation.MaxBytes)}, DefaultText: formatSize(int(eventlog.DefaultRotation.MaxBytes))},
		&cli.IntFlag{Name: "log-backups", Usage: "rotated log files kept (FILE.1 is the newest)", Value: eventlog.DefaultRotation.Backups},
		&cli.StringFlag{Name: "mode", Usage: "override the policy's mode: enforce or audit"},
		&cli.StringFlag{Name: "server-name", Usage: "the `NAME` the log records this server under (default: the policy's server:, else the command's base name)"},
		&cli.GenericFlag{Name: "max-message-bytes", Usage: "size limit for messages in both directions, overriding the two below (bytes, or 8MiB, 512KiB)",
			Value: &byteSize{}, DefaultText: "unset"},
		&cli.GenericFlag{Name: "max-request-bytes", Usage: "size limit for a message from the agent", Value: &byteSize{proxy.DefaultMaxRequestBytes},
			DefaultText: formatSize(proxy.DefaultMaxRequestBytes)},
		&cli.GenericFlag{Name: "max-response-bytes", Usage: "size limit for a message from the server", Value: &byteSize{proxy.DefaultMaxResponseBytes},
			DefaultText: formatSize(proxy.DefaultMaxResponseBytes)},
		&cli.BoolFlag{Name: "raw-stderr", Usage: "pass the server's stderr through unchanged (default: line by line through the text canonicaliser)"},
		&cli.GenericFlag{Name: "grace", Usage: "how long the server gets to exit after its input closes, and again after SIGTERM (5 means 5s)",
			Value: &seconds{proxy.DefaultGrace}, DefaultText: proxy.DefaultGrace.String()},
		&cli.BoolFlag{Name: "otel", EnvVars: []string{"MCPGUARD_OTEL"},
			Usage: "export decisions as OpenTelemetry traces and metrics over OTLP/HTTP, configured by the OTEL_* variables"},
	}
	runAction := c.action(c.runRelay)
	sinceFlag := &cli.StringFlag{Name: "since", Usage: "only events since `WHEN`: a duration before now (15m, 2h, 3d) or a time (2006-01-02T15:04:05Z, 2006-01-02 15:04)"}
	utcFlag := &cli.BoolFlag{Name: "utc", Usage: "show times in UTC rather than local time"}
	// --version prints what `mcpguard version` prints, to stdout, as every
	// CLI does (it starts no relay, so stdout is not the protocol).
	cli.VersionPrinter = func(*cli.Context) { fmt.Fprintf(c.stdout, "mcpguard %s\n", versionText()) }
	return &cli.App{
		Name:           "mcpguard",
		Usage:          "a firewall for the tools of AI agents, in front of an MCP server that speaks stdio",
		UsageText:      "mcpguard [run] [--policy FILE] [--log FILE] [--mode enforce|audit] -- COMMAND [ARGS...]",
		Reader:         c.stdin,
		Writer:         c.stderr, // stdout is the protocol
		ErrWriter:      c.stderr,
		Version:        versionText(),
		Flags:          runFlags,
		Action:         runAction,
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "relay between the agent (stdin/stdout) and the server",
				UsageText: "mcpguard run [--policy FILE] [--log FILE] [--mode enforce|audit] -- COMMAND [ARGS...]",
				Flags:     runFlags,
				Action:    runAction,
			},
			{
				Name:      "check",
				Usage:     "validate policy files; errors as file:line:col",
				UsageText: "mcpguard check [--tools-list FILE] POLICY... [-- COMMAND [ARGS...]]",
				Description: "With --tools-list FILE (a tools/list result, as mcpguard init --save-tools-list writes it), or a server\n" +
					"command after --, which check starts to list its tools, it also warns about tool names the policy writes\n" +
					"that the server does not have.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "tools-list", Usage: "a tools/list result `FILE` (mcpguard init --save-tools-list): warn about tool names the server does not have"},
					&cli.DurationFlag{Name: "timeout", Usage: "with a server command: how long it gets to list its tools", Value: 60 * time.Second},
				},
				Action: c.action(c.check),
			},
			{
				Name:      "eval",
				Usage:     "print the verdict a message from the agent would get, and why",
				UsageText: "mcpguard eval --policy FILE [--tools-list FILE] [REQUEST.json|-]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "policy", Usage: "policy `FILE`; default: the baseline"},
					&cli.StringFlag{Name: "mode", Usage: "override the policy's mode: enforce or audit"},
					&cli.StringFlag{Name: "tools-list", Usage: "a tools/list result `FILE` ({\"tools\":[...]}) whose input schemas server_schema: enforce uses"},
				},
				Action: c.action(c.eval),
			},
			{
				Name:      "init",
				Usage:     "start the server, list its tools, print a starter policy",
				UsageText: "mcpguard init [--out FILE] [--force] [--timeout D] [--save-tools-list FILE] -- COMMAND [ARGS...]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Usage: "write the policy to `FILE` instead of stdout"},
					&cli.StringFlag{Name: "save-tools-list", Usage: "also write the server's tools/list result to `FILE`, for eval --tools-list and check --tools-list"},
					&cli.BoolFlag{Name: "force", Usage: "overwrite --out FILE if it exists"},
					&cli.DurationFlag{Name: "timeout", Usage: "how long the server gets to list its tools", Value: 60 * time.Second},
				},
				Action: c.action(c.initCmd),
			},
			{
				Name:      "tail",
				Usage:     "show the log's decisions one readable line each; alert on rejection spikes",
				UsageText: "mcpguard tail [--follow] [--server S] [--since WHEN] [--spike N/WINDOW [--exit-on-spike]] [--all] [LOG]",
				Description: "LOG defaults to " + eventlog.DefaultPath() + ".\n" +
					"Without --all, shows rejections, audits, malformed and dropped messages, rewrites, limits, and server starts and exits.\n" +
					"--follow starts at the end of the log (at --since when given) and follows it across truncation and rotation.\n" +
					"--spike 5/1m writes an ALERT line when one server has 5 rejections within a minute, naming the top codes and tools;\n" +
					"with --exit-on-spike, tail exits with status 3 after the first alert.",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep reading as the log grows"},
					&cli.StringFlag{Name: "server", Usage: "only events of server `S`"},
					sinceFlag,
					&cli.StringFlag{Name: "spike", Usage: "alert when a server has `N/WINDOW` rejections (5/1m: 5 within a minute)"},
					&cli.BoolFlag{Name: "exit-on-spike", Usage: "exit with status 3 after the first alert (needs --spike)"},
					&cli.BoolFlag{Name: "all", Usage: "show every event"},
					&cli.StringFlag{Name: "color", Usage: "`WHEN` to colour: auto (a terminal, and NO_COLOR unset), always, never", Value: "auto"},
					utcFlag,
				},
				Action: c.action(c.tail),
			},
			{
				Name:        "stats",
				Usage:       "count the log's events and rejections, with a chart of rejections over time",
				UsageText:   "mcpguard stats [--since WHEN] [--by server|tool|code] [--json] [LOG]",
				Description: "LOG defaults to " + eventlog.DefaultPath() + ".",
				Flags: []cli.Flag{
					sinceFlag,
					&cli.StringFlag{Name: "by", Usage: "count rejections by `KEY` only: server, tool or code (default: all three)"},
					&cli.BoolFlag{Name: "json", Usage: "write one JSON object"},
					utcFlag,
				},
				Action: c.action(c.stats),
			},
			c.wrapCommand("wrap", "put mcpguard in front of every stdio server in every agent config", true),
			c.wrapCommand("unwrap", "restore every server that wrap guarded to its own command", false),
			{
				Name:      "status",
				Usage:     "list every configured server per client: guarded or not, policy, lock, rejections",
				UsageText: "mcpguard status [--client NAME]... [--project DIR]... [--log FILE]",
				Flags: append(configFlags(), &cli.StringFlag{Name: "log", Usage: "decision log `FILE`", Value: eventlog.DefaultPath(),
					DefaultText: "$XDG_STATE_HOME/mcpguard/mcpguard.log"}),
				Action: c.action(c.statusCmd),
			},
			{
				Name:      "pin",
				Usage:     "write / compare the lock file of what the server shows the model",
				UsageText: "mcpguard pin [--diff] [--policy FILE] [--lock FILE] [--timeout D] -- COMMAND [ARGS...]",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "policy", Usage: "policy `FILE` whose pins: names the lock file"},
					&cli.StringFlag{Name: "lock", Usage: "lock `FILE` (default: the policy's pins:)"},
					&cli.BoolFlag{Name: "diff", Usage: "print what changed since the lock, field by field; exit 1 when something did"},
					&cli.DurationFlag{Name: "timeout", Usage: "how long the server gets to start and list everything", Value: 60 * time.Second},
				},
				Action: c.action(c.pin),
			},
			{
				Name:  "version",
				Usage: "print the module version and the VCS revision it was built from",
				Action: c.action(func(*cli.Context) (int, error) {
					fmt.Fprintf(c.stdout, "mcpguard %s\n", versionText())
					return 0, nil
				}),
			},
		},
	}
}

// runRelay is `mcpguard [run]`: it relays between the agent and the
// server, and its status is the server's.
func (c *command) runRelay(ctx *cli.Context) (int, error) {
	argv, err := c.argv(ctx)
	if err != nil {
		return 2, err
	}
	if len(argv) == 0 {
		return 2, errors.New("no server command: mcpguard [run] [--policy FILE] -- COMMAND [ARGS...]")
	}
	maxReq, maxResp := sizeValue(ctx, "max-request-bytes"), sizeValue(ctx, "max-response-bytes")
	if n := sizeValue(ctx, "max-message-bytes"); n > 0 {
		maxReq, maxResp = n, n
	}
	if maxReq <= 0 || maxResp <= 0 {
		return 2, errors.New("message size limits must be positive")
	}
	rot := eventlog.Rotation{MaxBytes: int64(sizeValue(ctx, "log-max-bytes")), Backups: ctx.Int("log-backups")}
	if rot.Backups < 1 {
		return 2, errors.New("--log-backups must be at least 1")
	}
	reload := func() (*policy.Policy, error) {
		p, err := loadPolicy(ctx.String("policy"), ctx.String("mode"))
		if err != nil {
			return nil, err
		}
		return withServerName(p, ctx.String("server-name")), nil
	}
	cfg := proxy.Config{
		Argv:             argv,
		MaxRequestBytes:  maxReq,
		MaxResponseBytes: maxResp,
		Grace:            durationValue(ctx, "grace"),
		Stdin:            c.stdin,
		Stdout:           c.stdout,
		Stderr:           c.stderr,
		RawStderr:        ctx.Bool("raw-stderr"),
		Reload:           reload,
		BoundMemory:      true,
	}
	// A policy file loads and validates while its server starts (see
	// proxy.Server): nothing is relayed before it is in force, and one
	// that does not load ends the server before any byte has passed. The
	// baseline is built at once, and an unfiltered stderr cannot be held.
	var pol *policy.Policy
	if ctx.String("policy") != "" && !cfg.RawStderr {
		loaded := make(chan error, 1)
		go func() {
			var err error
			pol, err = reload()
			loaded <- err
		}()
		cfg.Server = proxy.Start(cfg)
		err = <-loaded
	} else {
		pol, err = reload()
	}
	if err != nil {
		abort(cfg.Server)
		return 2, err
	}
	cfg.Policy = pol
	if f, ok := c.stdin.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		fmt.Fprint(c.stderr, terminalNotice)
	}
	w, _, err := eventlog.Open(ctx.String("log"), rot, c.stderr)
	if err != nil {
		// The agent is waiting for its server: keep serving, say why the
		// decisions go unlogged, once (as a log that breaks later does).
		fmt.Fprintf(c.stderr, "mcpguard: cannot open log %s: %v; decisions are not logged\n", ctx.String("log"), err)
		w = io.Discard
	}
	server := proxy.ServerName(pol, argv)
	log := eventlog.New(w, server, eventlog.DefaultBudget)
	defer log.Flush()
	var tel *telemetry.Exporter
	if ctx.Bool("otel") {
		tel, err = telemetry.Start(telemetry.Config{Server: server, Version: versionText(), Log: log, Stderr: c.stderr})
		switch {
		case errors.Is(err, telemetry.ErrDisabled):
			tel = nil
		case err != nil:
			abort(cfg.Server)
			return 2, err
		}
	}
	// Export shuts down after the relay has written its last reply: it can
	// delay mcpguard's exit, never a message.
	defer tel.Shutdown()
	cfg.Log, cfg.Telemetry = log, tel
	return proxy.Run(cfg), nil
}

// abort ends a server started before its run failed to configure; nil
// when none was.
func abort(s *proxy.Server) {
	if s != nil {
		s.Abort()
	}
}

// terminalNotice is what mcpguard says on stderr when started by hand on
// a terminal: it waits silently for JSON-RPC otherwise, which looks hung.
const terminalNotice = "mcpguard: relaying MCP on stdin and stdout: an agent (an MCP client) starts this command and speaks JSON-RPC, one message per line.\n" +
	"mcpguard: by hand, type a message such as {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}; Ctrl-D ends the session, Ctrl-C stops it.\n" +
	"mcpguard: to see a policy's verdict without a server: mcpguard eval --policy FILE REQUEST.json\n"

// loadPolicy loads the policy file (the baseline when path is empty) and
// applies a --mode override. A bad policy is a configuration error: the
// server never runs under a policy that did not load (runRelay ends one
// started beside the load before anything has passed).
func loadPolicy(path, mode string) (*policy.Policy, error) {
	var pol *policy.Policy
	if path == "" {
		pol = policy.Baseline()
	} else {
		var err error
		if pol, err = policy.LoadFile(path); err != nil {
			return nil, err
		}
	}
	switch m := policy.Mode(mode); m {
	case "":
	case policy.Enforce, policy.Audit:
		pol = pol.WithMode(m)
	default:
		return nil, errors.New("--mode must be enforce or audit")
	}
	return pol, nil
}

// withServerName sets the name the log records the run's server under
// (--server-name) over the policy's server:. wrap gives each entry
// guarded by the baseline its own name, so that its rejections count
// apart from those of other entries started by the same launcher (npx).
// p is the run's own policy, fresh from loadPolicy.
func withServerName(p *policy.Policy, name string) *policy.Policy {
	if name != "" {
		p.Server = name
	}
	return p
}

// check is `mcpguard check`: "PATH: ok" on stdout for each policy file
// that loads, the errors (file:line:col) of one that does not on stderr.
// With --tools-list FILE, or a server command after -- (started to list
// its tools), it also warns about tool names a policy writes that the
// server does not have. The status is 1 when any file fails to load.
func (c *command) check(ctx *cli.Context) (int, error) {
	paths := ctx.Args().Slice()
	if len(paths) == 0 {
		return 2, errors.New("check needs at least one policy file")
	}
	var tools []byte
	var err error
	switch path := ctx.String("tools-list"); {
	case path != "" && len(c.serverArgv) > 0:
		return 2, errors.New("check: give --tools-list FILE or a server command after --, not both")
	case path != "":
		if tools, err = os.ReadFile(path); err != nil {
			return 2, err
		}
	case len(c.serverArgv) > 0:
		l, err := c.listServer(c.serverArgv, ctx.Duration("timeout"), false)
		if err == nil {
			tools, err = l.Tools()
		}
		if err != nil {
			return 1, fmt.Errorf("check: listing the server's tools: %w", err)
		}
	}
	status := 0
	for _, path := range paths {
		p, err := policy.LoadFile(path)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			status = 1
			continue
		}
		if tools != nil {
			warnings, err := p.ToolNameWarnings(tools)
			if err != nil {
				return 2, fmt.Errorf("--tools-list: not a tools/list result: %v", err)
			}
			for _, w := range warnings {
				fmt.Fprintf(c.stderr, "%s: warning: %s\n", path, w)
			}
		}
		fmt.Fprintf(c.stdout, "%s: ok\n", path)
	}
	return status, nil
}

// eval is `mcpguard eval`.
func (c *command) eval(ctx *cli.Context) (int, error) {
	pol, err := loadPolicy(ctx.String("policy"), ctx.String("mode"))
	if err != nil {
		return 2, err
	}
	msg, err := readInput(ctx.Args().First(), c.stdin)
	if err != nil {
		return 2, err
	}
	var tools []byte
	if path := ctx.String("tools-list"); path != "" {
		if tools, err = os.ReadFile(path); err != nil {
			return 2, err
		}
	}
	ev := pol.Evaluate(msg, tools)
	out, err := json.Marshal(ev, jsontext.Multiline(true))
	if err != nil {
		return 1, err
	}
	if _, err := fmt.Fprintf(c.stdout, "%s\n", out); err != nil {
		return 1, err
	}
	// A verdict only logged in audit mode still fails: a script checking
	// a policy must not pass because the policy is in audit.
	if ev.Verdict == policy.Rejected || ev.Verdict == policy.Audited || ev.Verdict == policy.Asked {
		return 1, nil
	}
	return 0, nil
}

// readInput reads a whole message from a file, or stdin for "" and "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "" || path == "-" {
		return io.ReadAll(io.LimitReader(stdin, proxy.DefaultMaxRequestBytes+1))
	}
	return os.ReadFile(path)
}

// initCmd is `mcpguard init`: it starts the server, lists its tools,
// stops it, and writes a starter policy (audit mode, unknown tools
// denied) that is sure to load. The status is 1 when the server or the
// policy fails.
func (c *command) initCmd(ctx *cli.Context) (int, error) {
	argv, err := c.argv(ctx)
	if err != nil {
		return 2, err
	}
	if len(argv) == 0 {
		return 2, errors.New("no server command: mcpguard init [--out FILE] -- COMMAND [ARGS...]")
	}
	out := ctx.String("out")
	if out != "" && !ctx.Bool("force") {
		if _, err := os.Stat(out); err == nil {
			return 2, fmt.Errorf("%s exists; pass --force to overwrite it", out)
		}
	}
	text, tools, err := c.starterPolicy(argv, ctx.Duration("timeout"))
	if err != nil {
		return 1, fmt.Errorf("init: %w", err)
	}
	if path := ctx.String("save-tools-list"); path != "" {
		if err := os.WriteFile(path, append(tools, '\n'), 0o644); err != nil {
			return 1, fmt.Errorf("init: --save-tools-list: %w", err)
		}
	}
	where := "stdout"
	if out == "" {
		_, err = c.stdout.Write(text)
	} else {
		where = out
		err = os.WriteFile(out, text, 0o644)
	}
	if err != nil {
		return 1, fmt.Errorf("init: %w", err)
	}
	fmt.Fprintf(c.stderr, "mcpguard: starter policy written to %s (mode: audit); review it, try calls with `mcpguard eval`, then switch to enforce\n", where)
	return 0, nil
}

// starterPolicy lists the server's tools, reports their lint findings,
// and returns the tools/list result with the starter policy for it.
func (c *command) starterPolicy(argv []string, timeout time.Duration) (text, tools []byte, err error) {
	l, err := c.listServer(argv, timeout, false)
	if err != nil {
		return nil, nil, err
	}
	if tools, err = l.Tools(); err != nil {
		return nil, nil, err
	}
	for _, r := range lint.Listed(tools, "tools", "name") {
		fmt.Fprintf(c.stderr, "mcpguard: lint: tool %s: %s\n", strconv.Quote(canon.FreeText(r.Name, 128)), lint.Join(r.Findings))
	}
	if text, err = starterFor(tools, argv); err != nil {
		return nil, nil, err
	}
	return text, tools, nil
}

// starterFor is the starter policy for a server's tools/list result,
// rooted at the server's directories (policy.ServerDirs, as path_scope
// reads them), and checked to load.
func starterFor(tools []byte, argv []string) ([]byte, error) {
	text, err := starter.Generate(tools, argv, starter.Options{Roots: policy.ServerDirs(argv).Abs(), Date: time.Now()})
	if err != nil {
		return nil, err
	}
	// The promise is a policy that passes `mcpguard check`; hold ourselves
	// to it before anyone relies on the file.
	if _, err := policy.Load("starter policy", text, lookupWithPWD); err != nil {
		return nil, fmt.Errorf("the starter policy does not load (a bug in mcpguard):\n%w", err)
	}
	return text, nil
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

// tail is `mcpguard tail`: one readable line per event of the log on
// stdout, notes on stderr. With --follow it reads on as the log grows
// until SIGINT or SIGTERM; with --exit-on-spike it stops with status 3
// after the first alert.
func (c *command) tail(ctx *cli.Context) (int, error) {
	path, loc, since, err := logArgs(ctx)
	if err != nil {
		return 2, err
	}
	color, err := colorOn(ctx.String("color"), c.stdout)
	if err != nil {
		return 2, err
	}
	t := &eventlog.Tail{W: c.stdout, Server: ctx.String("server"), Since: since, All: ctx.Bool("all"),
		ExitOnSpike: ctx.Bool("exit-on-spike"), Color: color, Location: loc}
	switch {
	case ctx.String("spike") != "":
		rule, err := eventlog.ParseSpike(ctx.String("spike"))
		if err != nil {
			return 2, err
		}
		t.Spikes = eventlog.NewSpikeDetector(rule)
	case t.ExitOnSpike:
		return 2, errors.New("--exit-on-spike needs --spike N/WINDOW")
	}
	if ctx.Bool("follow") {
		err = c.follow(path, since.IsZero(), t)
	} else {
		err = t.ReadFile(path)
	}
	if t.Skipped > 0 {
		fmt.Fprintf(c.stderr, "mcpguard: skipped %d lines that are malformed or not mcpguard events\n", t.Skipped)
	}
	switch {
	case errors.Is(err, eventlog.ErrSpike):
		return 3, nil
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return 2, err
	case err != nil:
		return 1, err
	}
	return 0, nil
}

// follow feeds the log's lines to t as they come, until SIGINT or SIGTERM
// (a normal end) or a spike with --exit-on-spike.
func (c *command) follow(path string, fromEnd bool, t *eventlog.Tail) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(c.stderr, "mcpguard: waiting for %s to appear\n", path)
		fromEnd = false // it may appear before the follower opens it: read it whole
	}
	if !fromEnd {
		// The follower reads the file from its start: the rotated
		// files come before it.
		tooLong, err := eventlog.ReadRotated(path, t.Line)
		t.Skipped += tooLong
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	f := &eventlog.Follower{Path: path, FromEnd: fromEnd, OnReopen: func(reason string) {
		fmt.Fprintf(c.stderr, "mcpguard: %s was %s; reading it from the start\n", path, reason)
	}}
	err := f.Run(ctx, t.Line)
	t.Skipped += f.TooLong()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// stats is `mcpguard stats`: counts of the log's events and rejections
// by server, tool and code, with a chart over time, as text or JSON.
func (c *command) stats(ctx *cli.Context) (int, error) {
	path, loc, since, err := logArgs(ctx)
	if err != nil {
		return 2, err
	}
	var by []string
	if key := ctx.String("by"); key != "" {
		if !slices.Contains(eventlog.Keys, key) {
			return 2, fmt.Errorf("--by must be one of %v", eventlog.Keys)
		}
		by = []string{key}
	}
	s := eventlog.NewStats(since)
	switch err := s.ReadLog(path); {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return 2, err
	case err != nil:
		return 1, fmt.Errorf("reading %s: %w", path, err)
	}
	if ctx.Bool("json") {
		err = s.WriteJSON(c.stdout, by, loc)
	} else {
		err = s.WriteText(c.stdout, by, loc)
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// colorOn decides --color: auto colours a terminal unless NO_COLOR is set
// (https://no-color.org).
func colorOn(when string, stdout io.Writer) (bool, error) {
	switch when {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if os.Getenv("NO_COLOR") != "" {
			return false, nil
		}
		f, ok := stdout.(*os.File)
		return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())), nil
	}
	return false, errors.New("--color must be auto, always or never")
}

// logArgs reads what tail and stats share: the optional LOG argument
// (the default log without one), --utc (where times are shown) and
// --since (a duration before now or a time; zero for all).
func logArgs(ctx *cli.Context) (path string, loc *time.Location, since time.Time, err error) {
	if ctx.Args().Len() > 1 {
		return "", nil, since, fmt.Errorf("%s: at most one LOG, got %q", ctx.Command.Name, ctx.Args().Slice())
	}
	if path = ctx.Args().First(); path == "" {
		path = eventlog.DefaultPath()
	}
	loc = time.Local
	if ctx.Bool("utc") {
		loc = time.UTC
	}
	if when := ctx.String("since"); when != "" {
		since, err = eventlog.ParseSince(when, time.Now(), loc)
	}
	return path, loc, since, err
}

// configFlags are the flags wrap, unwrap and status share.
func configFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "client", Usage: "only the configs of client `NAME` (" + strings.Join(agentconfig.Clients, ", ") + "); repeatable"},
		&cli.StringSliceFlag{Name: "project", Usage: "the project configs in `DIR` (default: the working directory); repeatable"},
		&cli.BoolFlag{Name: "all-projects", Usage: "also every project directory ~/.claude.json names (status always reads them)"},
		&cli.StringFlag{Name: "home", Usage: "look for user configs under `DIR` instead of $HOME", Hidden: true},
	}
}

// wrapCommand is `mcpguard wrap` (guard) or `mcpguard unwrap`.
func (c *command) wrapCommand(name, usage string, guard bool) *cli.Command {
	flags := append(configFlags(), &cli.BoolFlag{Name: "dry-run", Usage: "print the diff of every file it would change; change nothing"})
	usageText := "mcpguard unwrap [--client NAME]... [--project DIR]... [--all-projects] [--dry-run]"
	if guard {
		flags = append(flags,
			&cli.StringFlag{Name: "policy-dir", Usage: "write a policy per server into `DIR` (a copy of the shipped one that fits) and reference it"},
			&cli.BoolFlag{Name: "init", Usage: "with --policy-dir: run mcpguard init for servers no shipped policy fits (starts each)"},
			&cli.DurationFlag{Name: "timeout", Usage: "with --init: how long each server gets to list its tools", Value: 60 * time.Second},
			&cli.StringFlag{Name: "command", Usage: "the mcpguard `PATH` written into entries", DefaultText: "this binary's absolute path"},
			&cli.BoolFlag{Name: "pin-versions", Usage: "pin each package without an exact version (npx, bunx, uvx, docker/podman image) to the release its runner installed"})
		usageText = "mcpguard wrap [--client NAME]... [--project DIR]... [--all-projects] [--dry-run] [--policy-dir DIR [--init]] [--command PATH] [--pin-versions]"
	}
	return &cli.Command{Name: name, Usage: usage, UsageText: usageText, Flags: flags,
		Action: c.action(func(ctx *cli.Context) (int, error) {
			o, err := c.wrapOptions(ctx)
			if err != nil {
				return 2, err
			}
			if !guard {
				r := agentconfig.Unwrap(o)
				return c.report(r, r.Errs, r.Failed()), nil
			}
			if dir := ctx.String("policy-dir"); dir != "" {
				if o.Policies.Dir, err = filepath.Abs(dir); err != nil {
					return 2, err
				}
				o.Policies.Shipped = policies.FS
				if ctx.Bool("init") {
					o.Policies.Init = func(argv []string, out string) error {
						text, _, err := c.starterPolicy(argv, ctx.Duration("timeout"))
						if err != nil {
							return fmt.Errorf("init: %w", err)
						}
						return os.WriteFile(out, text, 0o644)
					}
				}
			} else if ctx.Bool("init") {
				return 2, errors.New("--init needs --policy-dir DIR: the starter policies are written there")
			}
			o.PinVersions = ctx.Bool("pin-versions")
			r := agentconfig.Wrap(o)
			return c.report(r, r.Errs, r.Failed()), nil
		})}
}

// report writes a command's report to stdout and the errors beside it to
// stderr; its status is 1 when something failed.
func (c *command) report(r fmt.Stringer, errs []error, failed bool) int {
	for _, err := range errs {
		fmt.Fprintf(c.stderr, "mcpguard: %v\n", err)
	}
	fmt.Fprint(c.stdout, r)
	if failed {
		return 1
	}
	return 0
}

// wrapOptions reads the flags wrap, unwrap and status share.
func (c *command) wrapOptions(ctx *cli.Context) (agentconfig.Options, error) {
	if ctx.Args().Len() > 0 || c.dashdash {
		return agentconfig.Options{}, fmt.Errorf("%s takes no arguments", ctx.Command.Name)
	}
	for _, name := range ctx.StringSlice("client") {
		if !agentconfig.KnownClient(name) {
			return agentconfig.Options{}, fmt.Errorf("unknown client %q: one of %s", name, strings.Join(agentconfig.Clients, ", "))
		}
	}
	projects := ctx.StringSlice("project")
	if len(projects) == 0 {
		if wd, err := os.Getwd(); err == nil {
			projects = []string{wd}
		}
	}
	env, err := agentconfig.EnvFromOS(ctx.String("home"), projects)
	if err != nil {
		return agentconfig.Options{}, err
	}
	env.AllProjects = ctx.Bool("all-projects")
	// The absolute path of this binary, so that clients started without the
	// user's PATH (Claude Desktop from the dock) find it; "mcpguard" (a PATH
	// lookup) when the OS cannot say.
	exe := ctx.String("command")
	if exe == "" {
		exe = "mcpguard"
		if p, err := os.Executable(); err == nil {
			exe = p
		}
		// A `go run` binary is deleted when it exits: entries pointing at
		// it would stop every server they guard.
		if strings.Contains(exe, string(filepath.Separator)+"go-build") && ctx.Command.Name == "wrap" && !ctx.Bool("dry-run") {
			return agentconfig.Options{}, fmt.Errorf("%s is a go run build that is deleted when it exits; install mcpguard, or pass --command PATH", exe)
		}
	}
	return agentconfig.Options{Env: env, Clients: ctx.StringSlice("client"), Exe: exe, DryRun: ctx.Bool("dry-run"),
		Policies: agentconfig.Policies{DryRun: ctx.Bool("dry-run")}}, nil
}

// statusCmd is `mcpguard status`; rejections are those of the last 24 hours
// in the log, by the server name the log records.
func (c *command) statusCmd(ctx *cli.Context) (int, error) {
	o, err := c.wrapOptions(ctx)
	if err != nil {
		return 2, err
	}
	so := agentconfig.StatusOptions{Since: "24h"}
	stats := eventlog.NewStats(time.Now().Add(-24 * time.Hour))
	if err := stats.ReadLog(ctx.String("log")); err == nil {
		so.Rejections = stats.By[eventlog.ByServer]
	}
	r := agentconfig.Status(o, so)
	return c.report(r, r.Errs, len(r.Errs) > 0), nil
}

// pin is `mcpguard pin`: it lists everything the server shows the model
// and writes the lock file of it, or with --diff prints what changed
// since the lock, field by field, in canonical form (safe to print). The
// status is 1 when --diff finds a change or the server cannot be listed,
// 2 for a lock file that is not named or does not load.
func (c *command) pin(ctx *cli.Context) (int, error) {
	argv, err := c.argv(ctx)
	if err != nil {
		return 2, err
	}
	if len(argv) == 0 {
		return 2, errors.New("no server command: mcpguard pin [--policy FILE] -- COMMAND [ARGS...]")
	}
	lock, diff := ctx.String("lock"), ctx.Bool("diff")
	var allow map[string][]string // the policy's lint_allow
	if path := ctx.String("policy"); lock == "" && path != "" {
		pol, err := policy.LoadFileWithoutLock(path)
		if err != nil {
			return 2, err
		}
		allow = pol.LintAllow
		if lock = pol.Pins; lock == "" {
			return 2, fmt.Errorf("%s has no pins: entry; add `pins: NAME.lock.yaml` to it, or pass --lock FILE", path)
		}
	}
	if lock == "" {
		return 2, errors.New("no lock file: pass --policy FILE (with pins:) or --lock FILE")
	}
	old, err := pins.ReadLock(lock)
	if err != nil && (diff || !errors.Is(err, pins.ErrNoLock)) {
		return 2, err
	}
	l, err := c.listServer(argv, ctx.Duration("timeout"), true)
	if err != nil {
		return 1, err
	}
	cur, lints, err := pins.Snapshot(l.Initialize, l.Pages)
	if err != nil {
		return 1, err
	}
	for _, f := range lints {
		if f.Findings = pins.Allowed(allow, f.Key, f.Findings); len(f.Findings) > 0 {
			fmt.Fprintf(c.stderr, "mcpguard: %s\n", f)
		}
	}
	var changes pins.Changes
	if old != nil {
		changes = pins.Diff(old, cur)
	}
	switch {
	case diff && len(changes) > 0:
		fmt.Fprint(c.stdout, changes)
		return 1, nil
	case diff:
		fmt.Fprintf(c.stderr, "mcpguard: the server matches %s\n", lock)
		return 0, nil
	case old != nil && len(changes) == 0:
		fmt.Fprintf(c.stderr, "mcpguard: %s is up to date (%s)\n", lock, cur.Summary())
		return 0, nil
	}
	fmt.Fprint(c.stderr, changes)
	if err := cur.WriteFile(lock); err != nil {
		return 1, err
	}
	fmt.Fprintf(c.stderr, "mcpguard: pinned %s in %s\n", cur.Summary(), lock)
	return 0, nil
}

// listServer starts the server and lists what it shows the model (with
// all, its prompts and resources too); timeout bounds the whole of it.
func (c *command) listServer(argv []string, timeout time.Duration, all bool) (*listing.Listing, error) {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return listing.List(ctx, argv, listing.Options{All: all, Stderr: c.stderr, Version: version})
}

// byteSize is a size flag that takes a number of bytes or a number with a
// unit: 8MiB, 512KiB, 1GiB (powers of 1024), 4MB, 500KB (powers of 1000).
type byteSize struct{ n int }

var sizeUnits = []struct {
	suffix string
	mult   int
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"b", 1},
}

func (b *byteSize) Set(s string) error {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<40 {
		return fmt.Errorf("%q is not a size: write bytes (4194304) or a number with a unit (8MiB, 512KiB, 4MB)", s)
	}
	b.n = int(n * float64(mult))
	return nil
}

func (b *byteSize) String() string {
	if b == nil || b.n == 0 {
		return ""
	}
	return formatSize(b.n)
}

func formatSize(n int) string {
	switch {
	case n%(1<<30) == 0:
		return strconv.Itoa(n>>30) + "GiB"
	case n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n)
}

// seconds is a duration flag that also takes a bare number of seconds:
// --grace 5 means 5s, as a user of sleep(1) or timeout(1) expects.
type seconds struct{ d time.Duration }

func (s *seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 || f > 24*3600 {
			return fmt.Errorf("%q: want a duration between 0 and 24h", v)
		}
		s.d = time.Duration(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration: write 5 (seconds), 5s, 1500ms or 1m", v)
	}
	s.d = d
	return nil
}

func (s *seconds) String() string {
	if s == nil {
		return ""
	}
	return s.d.String()
}

func sizeValue(ctx *cli.Context, name string) int {
	if b, ok := ctx.Generic(name).(*byteSize); ok && b != nil {
		return b.n
	}
	return 0
}

func durationValue(ctx *cli.Context, name string) time.Duration {
	if s, ok := ctx.Generic(name).(*seconds); ok && s != nil {
		return s.d
	}
	return 0
}

// versionText is the module version and the VCS revision the binary was
// built from (runtime/debug build info), e.g.
// "v0.3.0 (rev 1a2b3c4d5e6f, 2026-11-23T21:00:00Z)" or
// "(devel) (rev 1a2b3c4d5e6f+modified, ...)". A version set with -ldflags
// "-X main.version=..." wins over the module version.
func versionText() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v == "dev" && info.Main.Version != "" {
		v = info.Main.Version
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v + " (no VCS revision in the build info)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += "+modified"
	}
	if at != "" {
		rev += ", " + at
	}
	return v + " (rev " + rev + ")"
}

// misplacedFlags finds mcpguard's own flags in a server command line given
// without "--" (`mcpguard ./server.sh --policy p.yaml`): cli stops reading
// flags at the first argument, so they would go to the server and the
// relay would run under the baseline while the user believes the policy
// is on. It returns the spelling that does what was meant.
func misplacedFlags(cmd string, argv []string, flags []cli.Flag) error {
	takesValue := map[string]bool{}
	for _, f := range flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	// -h, -v and --help, --version are every program's own: a server's
	// --verbose -v is not mcpguard's.
	for _, n := range []string{"help", "h", "version", "v"} {
		delete(takesValue, n)
	}
	var own, server []string
	server = append(server, argv[0])
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || name == "" {
			server = append(server, a)
			continue
		}
		name, _, hasValue := strings.Cut(name, "=")
		needs, ours := takesValue[name]
		if !ours {
			server = append(server, a)
			continue
		}
		own = append(own, a)
		if needs && !hasValue && i+1 < len(argv) {
			i++
			own = append(own, argv[i])
		}
	}
	if len(own) == 0 {
		return nil
	}
	prefix := "mcpguard "
	if cmd != "" {
		prefix += cmd + " "
	}
	return errors.New("mcpguard's flags (" + strings.Join(own, " ") + ") come after the server command, so they would go to the server " +
		"and mcpguard would run without them; put them first and the server after --:\n    " +
		prefix + strings.Join(own, " ") + " -- " + strings.Join(server, " "))
}
