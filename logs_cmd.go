package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/mcpguard/mcpguard/proxy/eventlog"
)

// logCommands returns `tail` and `stats`, which read the decision log.
// Help and errors go to stderr; *status is set to 3 when `tail
// --exit-on-spike` sees a spike.
func logCommands(stdin io.Reader, stdout, stderr io.Writer, status *int) []*cli.Command {
	sinceFlag := &cli.StringFlag{Name: "since", Usage: "only events since `WHEN`: a duration before now (15m, 2h, 3d) or a time (2006-01-02T15:04:05Z, 2006-01-02 15:04)"}
	utcFlag := &cli.BoolFlag{Name: "utc", Usage: "show times in UTC rather than local time"}
	return []*cli.Command{
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
			Action: func(c *cli.Context) error {
				return tailAction(c, stdout, stderr, status)
			},
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
			Action: func(c *cli.Context) error {
				return statsAction(c, stdout, stderr)
			},
		},
	}
}

// logPath is the LOG argument, else the default log.
func logPath(c *cli.Context) (string, error) {
	switch c.Args().Len() {
	case 0:
		return eventlog.DefaultPath(), nil
	case 1:
		return c.Args().First(), nil
	}
	return "", usagef("%s: at most one LOG, got %q", c.Command.Name, c.Args().Slice())
}

func logLocation(c *cli.Context) *time.Location {
	if c.Bool("utc") {
		return time.UTC
	}
	return time.Local
}

func logSince(c *cli.Context, loc *time.Location) (time.Time, error) {
	if !c.IsSet("since") {
		return time.Time{}, nil
	}
	t, err := eventlog.ParseSince(c.String("since"), time.Now(), loc)
	if err != nil {
		return time.Time{}, usageError{err}
	}
	return t, nil
}

// colorOn decides --color: auto colours a terminal unless NO_COLOR is set
// (https://no-color.org).
func colorOn(when string, stdout io.Writer) (bool, error) {
	switch when {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		if os.Getenv("NO_COLOR") != "" {
			return false, nil
		}
		f, ok := stdout.(*os.File)
		return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())), nil
	}
	return false, usagef("--color must be auto, always or never")
}

func tailAction(c *cli.Context, stdout, stderr io.Writer, status *int) error {
	path, err := logPath(c)
	if err != nil {
		return err
	}
	loc := logLocation(c)
	since, err := logSince(c, loc)
	if err != nil {
		return err
	}
	color, err := colorOn(c.String("color"), stdout)
	if err != nil {
		return err
	}
	t := &eventlog.Tail{W: stdout, Server: c.String("server"), Since: since, All: c.Bool("all"),
		ExitOnSpike: c.Bool("exit-on-spike"), Color: color, Location: loc}
	if s := c.String("spike"); s != "" {
		rule, err := eventlog.ParseSpike(s)
		if err != nil {
			return usageError{err}
		}
		t.Spikes = eventlog.NewSpikeDetector(rule)
	} else if t.ExitOnSpike {
		return usagef("--exit-on-spike needs --spike N/WINDOW")
	}

	if c.Bool("follow") {
		err = followLog(c.Context, path, since.IsZero(), t, stderr)
	} else {
		err = readLog(path, t)
	}
	if t.Skipped > 0 {
		fmt.Fprintf(stderr, "mcpguard: skipped %d lines that are malformed or not mcpguard events\n", t.Skipped)
	}
	if errors.Is(err, eventlog.ErrSpike) {
		*status = 3
		return nil
	}
	return err
}

// readLog feeds every line of the log at path to t.
func readLog(path string, t *eventlog.Tail) error {
	f, err := os.Open(path)
	if err != nil {
		return usagef("cannot open log: %v", err)
	}
	defer f.Close()
	lines := eventlog.NewLines(f, 0)
	defer func() { t.Skipped += lines.TooLong() }()
	for {
		line, err := lines.Next()
		if err == io.EOF {
			if rest := lines.Rest(); rest != nil {
				return t.Line(rest)
			}
			return nil
		}
		if err != nil {
			return err
		}
		if err := t.Line(line); err != nil {
			return err
		}
	}
}

// followLog feeds the log's lines to t as they come, until SIGINT or
// SIGTERM (a normal end) or a spike with --exit-on-spike.
func followLog(ctx context.Context, path string, fromEnd bool, t *eventlog.Tail, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "mcpguard: waiting for %s to appear\n", path)
	}
	f := &eventlog.Follower{Path: path, FromEnd: fromEnd, OnReopen: func(reason string) {
		fmt.Fprintf(stderr, "mcpguard: %s was %s; reading it from the start\n", path, reason)
	}}
	err := f.Run(ctx, t.Line)
	t.Skipped += f.TooLong()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func statsAction(c *cli.Context, stdout, stderr io.Writer) error {
	path, err := logPath(c)
	if err != nil {
		return err
	}
	loc := logLocation(c)
	since, err := logSince(c, loc)
	if err != nil {
		return err
	}
	var by []string
	if k := c.String("by"); k != "" {
		if !strings.Contains(" "+strings.Join(eventlog.Keys, " ")+" ", " "+k+" ") {
			return usagef("--by must be one of %s", strings.Join(eventlog.Keys, ", "))
		}
		by = []string{k}
	}
	f, err := os.Open(path)
	if err != nil {
		return usagef("cannot open log: %v", err)
	}
	defer f.Close()
	s := eventlog.NewStats(since)
	if _, err := s.ReadFrom(f); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if c.Bool("json") {
		return s.WriteJSON(stdout, by, loc)
	}
	return s.WriteText(stdout, by, loc)
}
