package agentconfig

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Options are what wrap, unwrap and status share.
type Options struct {
	Env     Env
	Clients []string // empty: every client
	// Exe is the command written into entries: the absolute path of the
	// running mcpguard, so that clients started without the user's PATH
	// (Claude Desktop from the dock) find it.
	Exe      string
	DryRun   bool
	Policies Policies
	Stdout   io.Writer
	Stderr   io.Writer
}

func (o *Options) load() ([]*Config, []error) {
	isGuard := IsGuardCommand(o.Exe)
	var cfgs []*Config
	var errs []error
	for _, loc := range Locate(o.Env, o.Clients) {
		c, err := Load(loc, isGuard)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v; left as it is", Display(loc.Path, o.Env.Home), err))
			continue
		}
		cfgs = append(cfgs, c)
	}
	return cfgs, errs
}

// Wrap puts mcpguard in front of every unguarded stdio server of every
// config found, and reports what it did per file (or, with DryRun, the
// diff it would apply). It returns 1 when a file could not be read or
// written (the others are still handled), else 0.
func Wrap(o Options) (int, error) {
	return o.run(true)
}

// Unwrap restores every guarded entry to the command it guarded.
func Unwrap(o Options) (int, error) {
	return o.run(false)
}

func (o *Options) run(wrap bool) (int, error) {
	o.Policies.DryRun = o.DryRun // a dry run writes no policy and starts no server
	cfgs, errs := o.load()
	status := 0
	for _, err := range errs {
		fmt.Fprintf(o.Stderr, "mcpguard: %v\n", err)
		status = 1
	}
	if len(cfgs) == 0 && len(errs) == 0 {
		fmt.Fprintln(o.Stdout, "no agent configs found")
		return 0, nil
	}
	for _, c := range cfgs {
		if c.Unsupported != "" {
			fmt.Fprintf(o.Stdout, "%s (%s, %s): not supported: %s\n", Display(c.Path, o.Env.Home), c.Client, c.Scope, c.Unsupported)
			continue
		}
		var report bytes.Buffer
		tw := tabwriter.NewWriter(&report, 0, 4, 2, ' ', 0)
		failed := false
		for i := range c.Servers {
			s := &c.Servers[i]
			line := o.edit(c, s, wrap)
			if line.failed {
				failed = true
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", serverLabel(s), line.what, line.detail)
		}
		tw.Flush()
		header := fmt.Sprintf("%s (%s, %s)", Display(c.Path, o.Env.Home), c.Client, c.Scope)
		after := c.Bytes()
		changed := !bytes.Equal(after, c.src)
		switch {
		case !changed:
			header += ": no change"
		case o.DryRun:
			header += ": would change (dry run)"
		default:
			if err := commit(c.Path, c.src, after); err != nil {
				fmt.Fprintf(o.Stderr, "mcpguard: %s: %v; left as it is\n", Display(c.Path, o.Env.Home), err)
				status = 1
				header += ": NOT CHANGED"
			} else {
				header += ": changed (backup: " + Display(c.Path, o.Env.Home) + BackupSuffix + ")"
				if c.Scope != "user" {
					header += "\n  (a project file: if it is committed, the paths written are this machine's; --command mcpguard writes a PATH lookup)"
				}
			}
		}
		if failed {
			status = 1
		}
		fmt.Fprintln(o.Stdout, header)
		o.Stdout.Write(report.Bytes())
		if changed && o.DryRun {
			name := Display(c.Path, o.Env.Home)
			fmt.Fprint(o.Stdout, udiff.Unified(name, name, string(c.src), string(after)))
		}
	}
	return status, nil
}

type outcome struct {
	what, detail string
	failed       bool
}

// edit wraps or unwraps one server and says what became of it.
func (o *Options) edit(c *Config, s *Server, wrap bool) outcome {
	switch s.Kind {
	case Remote:
		return outcome{"remote", s.Note + ": not wrappable (nothing runs locally)", false}
	case Unusable:
		return outcome{"skipped", s.Note, false}
	}
	if wrap && s.Kind == Guarded {
		if s.Policy == "" && len(s.Own) == 0 && len(s.Argv) > 0 && o.Policies.Dir != "" {
			return o.givePolicy(c, s)
		}
		return outcome{"guarded", "already; " + policyLabel(s.Policy), false}
	}
	if !wrap && s.Kind == Unguarded {
		return outcome{"unguarded", "not wrapped", false}
	}
	if !wrap {
		if err := c.unguard(s); err != nil {
			return outcome{"error", err.Error(), true}
		}
		return outcome{"unwrapped", "runs " + s.Argv[0] + " directly again", false}
	}
	pl, perr := o.Policies.place(c.Client, c, s)
	if perr != nil && pl.note == "" {
		return outcome{"error", "policy: " + perr.Error() + "; not wrapped", true}
	}
	if err := c.guard(s, o.Exe, pl.path); err != nil {
		return outcome{"error", err.Error(), true}
	}
	detail := policyLabel(pl.path)
	if pl.note != "" && pl.note != "baseline" {
		detail += " (" + pl.note + ")"
	}
	if perr != nil {
		detail += "; " + perr.Error()
		return outcome{"wrapped", detail, true}
	}
	return outcome{"wrapped", detail, false}
}

// givePolicy places a policy for a server guarded by the baseline (wrap
// without --policy-dir before) and adds it to the entry.
func (o *Options) givePolicy(c *Config, s *Server) outcome {
	pl, err := o.Policies.place(c.Client, c, s)
	if err != nil {
		return outcome{"guarded", "already, by the baseline; policy: " + err.Error(), true}
	}
	if pl.path == "" {
		return outcome{"guarded", "already; policy: baseline (" + pl.note + ")", false}
	}
	if err := c.addPolicy(s, pl.path); err != nil {
		return outcome{"error", err.Error(), true}
	}
	return outcome{"policy", "added: " + pl.path + " (" + pl.note + ")", false}
}

func serverLabel(s *Server) string {
	if s.Project != "" {
		return s.Name + " [" + s.Project + "]"
	}
	return s.Name
}

func policyLabel(p string) string {
	if p == "" {
		return "policy: baseline"
	}
	return "policy: " + p
}
