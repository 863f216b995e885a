// Command mcpguard is a firewall for the tools of AI agents: it runs in
// front of an MCP server that speaks stdio, checks every request against a
// YAML policy, canonicalises what the server sends back, and logs every
// decision. See README.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/urfave/cli/v2"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/proxy"
	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError marks errors that exit with status 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

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

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	own, serverArgv, dashdash := splitArgv(args)
	status := 0
	app := newApp(stdin, stdout, stderr, serverArgv, dashdash, &status)
	if err := app.Run(own); err != nil {
		fmt.Fprintf(stderr, "mcpguard: %v\n", err)
		var ue usageError
		var ec cli.ExitCoder
		switch {
		case errors.As(err, &ue):
			return 2
		case errors.As(err, &ec):
			return ec.ExitCode()
		}
		return 2 // flag parsing errors from cli are usage errors
	}
	return status
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, serverArgv []string, dashdash bool, status *int) *cli.App {
	runFlags := []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` (YAML); default: the embedded baseline policy"},
		&cli.StringFlag{Name: "log", Usage: "decision log `FILE`, or - for stderr", Value: eventlog.DefaultPath(), DefaultText: "$XDG_STATE_HOME/mcpguard/mcpguard.log"},
		&cli.StringFlag{Name: "mode", Usage: "override the policy's mode: enforce or audit"},
		&cli.IntFlag{Name: "max-message-bytes", Usage: "size limit for messages in both directions (overrides the two below)"},
		&cli.IntFlag{Name: "max-request-bytes", Usage: "size limit for a message from the agent", Value: proxy.DefaultMaxRequestBytes},
		&cli.IntFlag{Name: "max-response-bytes", Usage: "size limit for a message from the server", Value: proxy.DefaultMaxResponseBytes},
		&cli.DurationFlag{Name: "grace", Usage: "how long the server gets to exit after its input closes, and again after SIGTERM", Value: proxy.DefaultGrace},
	}
	runAction := func(c *cli.Context) error {
		argv := serverArgv
		if !dashdash {
			argv = c.Args().Slice()
		} else if c.Args().Len() > 0 {
			return usagef("unexpected arguments before --: %q", c.Args().Slice())
		}
		if len(argv) == 0 {
			return usagef("no server command: mcpguard [run] [--policy FILE] -- COMMAND [ARGS...]")
		}
		cfg, err := runConfig(c, argv, stdin, stdout, stderr)
		if err != nil {
			return err
		}
		*status = proxy.Run(cfg)
		return nil
	}
	app := &cli.App{
		Name:            "mcpguard",
		Usage:           "a firewall for the tools of AI agents, in front of an MCP server that speaks stdio",
		UsageText:       "mcpguard [run] [--policy FILE] [--log FILE] [--mode enforce|audit] -- COMMAND [ARGS...]",
		Reader:          stdin,
		Writer:          stderr, // stdout is the protocol
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Flags:           runFlags,
		Action:          runAction,
		ExitErrHandler:  func(*cli.Context, error) {},
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
				UsageText: "mcpguard check POLICY...",
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return usagef("check needs at least one policy file")
					}
					failed := false
					for _, path := range c.Args().Slice() {
						if _, err := policy.LoadFile(path); err != nil {
							fmt.Fprintln(stderr, err)
							failed = true
							continue
						}
						fmt.Fprintf(stdout, "%s: ok\n", path)
					}
					if failed {
						*status = 1
					}
					return nil
				},
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
				Action: func(c *cli.Context) error {
					pol, err := loadPolicy(c.String("policy"), c.String("mode"))
					if err != nil {
						return err
					}
					msg, err := readInput(c.Args().First(), stdin)
					if err != nil {
						return usageError{err}
					}
					var tools []byte
					if path := c.String("tools-list"); path != "" {
						if tools, err = os.ReadFile(path); err != nil {
							return usageError{err}
						}
					}
					ev := pol.Evaluate(msg, tools)
					out, _ := json.Marshal(ev, jsontext.Multiline(true))
					fmt.Fprintf(stdout, "%s\n", out)
					if ev.Verdict == "rejected" {
						*status = 1
					}
					return nil
				},
			},
			initCommand(stdin, stdout, stderr, serverArgv, status),
			{
				Name:  "version",
				Usage: "print the version",
				Action: func(c *cli.Context) error {
					fmt.Fprintf(stdout, "mcpguard %s\n", version)
					return nil
				},
			},
		},
	}
	app.Commands = append(app.Commands, logCommands(stdin, stdout, stderr, status)...)
	return app
}

// runConfig turns the run flags into the relay's configuration.
func runConfig(c *cli.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (proxy.Config, error) {
	pol, err := loadPolicy(c.String("policy"), c.String("mode"))
	if err != nil {
		return proxy.Config{}, err
	}
	maxReq, maxResp := c.Int("max-request-bytes"), c.Int("max-response-bytes")
	if n := c.Int("max-message-bytes"); n > 0 {
		maxReq, maxResp = n, n
	}
	if maxReq <= 0 || maxResp <= 0 {
		return proxy.Config{}, usagef("message size limits must be positive")
	}
	w, _, err := eventlog.Open(c.String("log"), stderr)
	if err != nil {
		// The agent is waiting for its server: keep serving, say why the
		// decisions go unlogged, once (as a log that breaks later does).
		fmt.Fprintf(stderr, "mcpguard: cannot open log %s: %v; decisions are not logged\n", c.String("log"), err)
		w = io.Discard
	}
	return proxy.Config{
		Argv:             argv,
		Policy:           pol,
		Log:              eventlog.New(w, proxy.ServerName(pol, argv)),
		MaxRequestBytes:  maxReq,
		MaxResponseBytes: maxResp,
		Grace:            c.Duration("grace"),
		Stdin:            stdin,
		Stdout:           stdout,
		Stderr:           stderr,
	}, nil
}

// readInput reads a whole message from a file, or stdin for "" and "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "" || path == "-" {
		return io.ReadAll(io.LimitReader(stdin, proxy.DefaultMaxRequestBytes+1))
	}
	return os.ReadFile(path)
}

// loadPolicy loads the policy file (the baseline when path is empty) and
// applies a --mode override. A bad policy is a configuration error: the
// server is never started under a policy that did not load.
func loadPolicy(path, mode string) (*policy.Policy, error) {
	pol := policy.Baseline()
	if path != "" {
		var err error
		if pol, err = policy.LoadFile(path); err != nil {
			return nil, usageError{err}
		}
	}
	switch m := policy.Mode(mode); m {
	case "":
	case policy.Enforce, policy.Audit:
		pol = pol.WithMode(m)
	default:
		return nil, usagef("--mode must be enforce or audit")
	}
	return pol, nil
}
