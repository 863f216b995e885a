package eventlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
)

// TailOptions are the settings of `mcpguard tail`.
type TailOptions struct {
	Path        string // the log; DefaultPath() when empty
	Follow      bool   // keep reading as the log grows, across truncation and rotation
	Server      string // only this server's events
	Since       string // a duration before now or a time; "" for all
	Spike       string // N/WINDOW: alert when a server has N rejections within WINDOW
	ExitOnSpike bool   // stop with status 3 after the first alert
	All         bool   // every event, not only decisions, starts and exits
	Color       string // auto, always or never
	UTC         bool   // times in UTC rather than local time
}

// StatsOptions are the settings of `mcpguard stats`.
type StatsOptions struct {
	Path  string // the log; DefaultPath() when empty
	Since string // a duration before now or a time; "" for all
	By    string // count rejections by this key only (one of Keys); "" for all
	JSON  bool   // one JSON object instead of text
	UTC   bool
}

// Exit statuses of the log commands.
const (
	StatusOK    = 0
	StatusUsage = 2 // a bad flag or an unreadable log
	StatusSpike = 3 // tail --exit-on-spike saw a spike
)

// RunTail is `mcpguard tail`: it writes one readable line per event of the
// log to stdout, and notes on stderr. It follows the log until ctx ends or
// SIGINT/SIGTERM when o.Follow is set. The status is StatusSpike after an
// alert with o.ExitOnSpike, StatusUsage with a usage error.
func RunTail(ctx context.Context, o TailOptions, stdout, stderr io.Writer) (int, error) {
	loc := location(o.UTC)
	since, err := parseSinceFlag(o.Since, loc)
	if err != nil {
		return StatusUsage, err
	}
	color, err := colorOn(o.Color, stdout)
	if err != nil {
		return StatusUsage, err
	}
	t := &Tail{W: stdout, Server: o.Server, Since: since, All: o.All,
		ExitOnSpike: o.ExitOnSpike, Color: color, Location: loc}
	switch {
	case o.Spike != "":
		rule, err := ParseSpike(o.Spike)
		if err != nil {
			return StatusUsage, err
		}
		t.Spikes = NewSpikeDetector(rule)
	case o.ExitOnSpike:
		return StatusUsage, errors.New("--exit-on-spike needs --spike N/WINDOW")
	}
	path := orDefault(o.Path)
	if o.Follow {
		err = followLog(ctx, path, since.IsZero(), t, stderr)
	} else {
		err = readAll(path, t)
	}
	if t.Skipped > 0 {
		fmt.Fprintf(stderr, "mcpguard: skipped %d lines that are malformed or not mcpguard events\n", t.Skipped)
	}
	switch {
	case errors.Is(err, ErrSpike):
		return StatusSpike, nil
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return StatusUsage, err
	case err != nil:
		return 1, err
	}
	return StatusOK, nil
}

// RunStats is `mcpguard stats`: counts of the log's events and rejections
// by server, tool and code, with a chart over time, as text or JSON.
func RunStats(o StatsOptions, stdout io.Writer) (int, error) {
	loc := location(o.UTC)
	since, err := parseSinceFlag(o.Since, loc)
	if err != nil {
		return StatusUsage, err
	}
	var by []string
	if o.By != "" {
		if !slices.Contains(Keys, o.By) {
			return StatusUsage, fmt.Errorf("--by must be one of %v", Keys)
		}
		by = []string{o.By}
	}
	path := orDefault(o.Path)
	f, err := os.Open(path)
	if err != nil {
		return StatusUsage, fmt.Errorf("cannot open log: %w", err)
	}
	defer f.Close()
	s := NewStats(since)
	if _, err := s.ReadFrom(f); err != nil {
		return 1, fmt.Errorf("reading %s: %w", path, err)
	}
	if o.JSON {
		err = s.WriteJSON(stdout, by, loc)
	} else {
		err = s.WriteText(stdout, by, loc)
	}
	if err != nil {
		return 1, err
	}
	return StatusOK, nil
}

func orDefault(path string) string {
	if path == "" {
		return DefaultPath()
	}
	return path
}

func location(utc bool) *time.Location {
	if utc {
		return time.UTC
	}
	return time.Local
}

func parseSinceFlag(s string, loc *time.Location) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return ParseSince(s, time.Now(), loc)
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

// readAll feeds every line of the log at path to t.
func readAll(path string, t *Tail) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot open log: %w", err)
	}
	defer f.Close()
	lines := NewLines(f, 0)
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

// followLog feeds the log's lines to t as they come, until SIGINT or SIGTERM
// (a normal end) or a spike with ExitOnSpike.
func followLog(ctx context.Context, path string, fromEnd bool, t *Tail, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "mcpguard: waiting for %s to appear\n", path)
	}
	f := &Follower{Path: path, FromEnd: fromEnd, OnReopen: func(reason string) {
		fmt.Fprintf(stderr, "mcpguard: %s was %s; reading it from the start\n", path, reason)
	}}
	err := f.Run(ctx, t.Line)
	t.Skipped += f.TooLong()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
