package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

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
	// PinVersions pins an unpinned package to the release its runner has
	// installed for it (findPin) before wrapping the entry.
	PinVersions bool
}

// load reads every config found; the ones that cannot be read or parsed
// are returned in failed, each with its error in errs.
func (o *Options) load() (cfgs []*Config, errs []error, failed []Location) {
	isGuard := IsGuardCommand(o.Exe)
	for _, loc := range Locate(o.Env, o.Clients) {
		c, err := Load(loc, isGuard)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v; left as it is", Display(loc.Path, o.Env.Home), err))
			failed = append(failed, loc)
			continue
		}
		cfgs = append(cfgs, c)
	}
	return cfgs, errs, failed
}

// Report is what Wrap or Unwrap did: one File per config found, in the
// order Locate lists them.
type Report struct {
	Files []File
	// Errs are the configs that could not be read or written, each left
	// as it was (the others are still handled).
	Errs []error
}

// File is one config and what became of it.
type File struct {
	Path   string // as displayed: under the home directory as ~/...
	Client string
	Scope  string // "user", or "project DIR"
	// Unsupported says why the file is listed but not edited (codex's
	// TOML); nothing else is set then.
	Unsupported string
	Servers     []Outcome
	// State is "no change", "would change (dry run)", "changed" or
	// "NOT CHANGED" (the write failed; the error is in Report.Errs).
	State string
	// Diff is the unified diff of a dry run's change.
	Diff string
}

// Outcome is what became of one server entry.
type Outcome struct {
	Server string // its name, with [PROJECT] for a project's local server
	What   string // wrapped, unwrapped, guarded, unguarded, policy, remote, skipped, error
	Detail string
	Failed bool // the entry, or the policy meant for it, could not be handled
}

// Failed says whether the exit status should say something went wrong:
// a config not read or written, or an entry not handled.
func (r Report) Failed() bool {
	if len(r.Errs) > 0 {
		return true
	}
	for _, f := range r.Files {
		for _, s := range f.Servers {
			if s.Failed {
				return true
			}
		}
	}
	return false
}

// String is the report as wrap and unwrap print it: per file, a header
// with its state, a line per server, and a dry run's diff.
func (r Report) String() string {
	var b strings.Builder
	if len(r.Files) == 0 && len(r.Errs) == 0 {
		return "no agent configs found\n"
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "%s (%s, %s)", f.Path, f.Client, f.Scope)
		if f.Unsupported != "" {
			fmt.Fprintf(&b, ": not supported: %s\n", f.Unsupported)
			continue
		}
		b.WriteString(": " + f.State)
		if f.State == "changed" {
			b.WriteString(" (backup: " + f.Path + BackupSuffix + ")")
			if f.Scope != "user" {
				b.WriteString("\n  (a project file: if it is committed, the paths written are this machine's; --command mcpguard writes a PATH lookup)")
			}
		}
		b.WriteByte('\n')
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, s := range f.Servers {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Server, s.What, s.Detail)
		}
		tw.Flush()
		b.WriteString(f.Diff)
	}
	return b.String()
}

// Wrap puts mcpguard in front of every unguarded stdio server of every
// config found and writes each changed file (with DryRun, only computes
// the diff it would apply).
func Wrap(o Options) Report {
	return o.run(true)
}

// Unwrap restores every guarded entry to the command it guarded.
func Unwrap(o Options) Report {
	return o.run(false)
}

func (o *Options) run(wrap bool) Report {
	o.Policies.DryRun = o.DryRun // a dry run writes no policy and starts no server
	cfgs, errs, _ := o.load()
	r := Report{Errs: errs}
	for _, c := range cfgs {
		f, err := o.handle(c, wrap)
		if err != nil {
			r.Errs = append(r.Errs, fmt.Errorf("%s: %v; left as it is", f.Path, err))
		}
		r.Files = append(r.Files, f)
	}
	return r
}

// commitTries is how many times a config that changed while it was being
// edited is read and edited again before wrap gives up on it.
const commitTries = 5

// handle edits the servers of one config and writes it; a config that
// changed meanwhile is read and edited again, up to commitTries times.
func (o *Options) handle(c *Config, wrap bool) (File, error) {
	for try := 1; ; try++ {
		f := File{Path: Display(c.Path, o.Env.Home), Client: c.Client, Scope: c.Scope, Unsupported: c.Unsupported}
		if c.Unsupported != "" {
			return f, nil
		}
		for i := range c.Servers {
			s := &c.Servers[i]
			out := o.edit(c, s, wrap)
			out.Server = serverLabel(s)
			f.Servers = append(f.Servers, out)
		}
		after := c.Bytes()
		switch {
		case bytes.Equal(after, c.src):
			f.State = "no change"
		case o.DryRun:
			f.State = "would change (dry run)"
			f.Diff = udiff.Unified(f.Path, f.Path, string(c.src), string(after))
		default:
			err := commit(c.Path, c.src, after)
			if errors.Is(err, errChanged) && try < commitTries {
				time.Sleep(time.Duration(try) * 10 * time.Millisecond)
				fresh, lerr := Load(c.Location, IsGuardCommand(o.Exe))
				if lerr == nil {
					c = fresh
					continue
				}
				err = lerr
			}
			if err != nil {
				f.State = "NOT CHANGED"
				return f, err
			}
			f.State = "changed"
		}
		return f, nil
	}
}

// outcome is an Outcome before its server label is set.
func outcome(what, detail string, failed bool) Outcome {
	return Outcome{What: what, Detail: detail, Failed: failed}
}

// edit wraps or unwraps one server and says what became of it.
func (o *Options) edit(c *Config, s *Server, wrap bool) Outcome {
	switch s.Kind {
	case Remote:
		return outcome("remote", s.Note+": not wrappable (nothing runs locally)", false)
	case Unusable:
		return outcome("skipped", s.Note, false)
	}
	if s.Kind == Guarded && s.Launcher != "" {
		if wrap {
			return outcome("guarded", "already, through "+s.Launcher+"; "+policyLabel(s.Policy), false)
		}
		return outcome("skipped", "mcpguard runs through "+s.Launcher+": unwrap it by hand", false)
	}
	if wrap && s.Kind == Guarded {
		if s.Policy == "" && (len(s.Own) == 0 || len(s.Own) == 2 && s.Own[0] == "--server-name") && len(s.Argv) > 0 && o.Policies.Dir != "" && c.Shape != CommandArray && c.Format == "json" {
			return o.givePolicy(c, s)
		}
		return outcome("guarded", "already; "+policyLabel(s.Policy), false)
	}
	if !wrap && s.Kind == Unguarded {
		return outcome("unguarded", "not wrapped", false)
	}
	if !wrap {
		if err := c.unguard(s); err != nil {
			return outcome("error", err.Error(), true)
		}
		return outcome("unwrapped", "runs "+s.Argv[0]+" directly again", false)
	}
	pin := ""
	if o.PinVersions {
		pin = o.pinVersion(c, s)
	}
	pl, perr := o.Policies.place(c.Client, c, s)
	if perr != nil && pl.note == "" {
		return outcome("error", "policy: "+perr.Error()+"; not wrapped", true)
	}
	name := ""
	if pl.path == "" {
		name = strings.TrimSuffix(policyFileName(c.Client, c, s), ".yaml")
	}
	if err := c.guard(s, o.Exe, pl.path, name); err != nil {
		return outcome("error", err.Error(), true)
	}
	detail := policyLabel(pl.path)
	if pl.note != "" && pl.note != "baseline" {
		detail += " (" + pl.note + ")"
	}
	if pin != "" {
		detail += "; " + pin
	}
	if perr != nil {
		detail += "; " + perr.Error()
		return outcome("wrapped", detail, true)
	}
	return outcome("wrapped", detail, false)
}

// pinVersion pins the entry's unpinned package to the release its
// runner installed (findPin) and says what it did, "" when there is
// nothing to pin.
func (o *Options) pinVersion(c *Config, s *Server) string {
	p, why := findPin(s.Argv, o.Env.Home)
	if p.word == "" {
		if why == "" {
			return ""
		}
		return "not pinned: " + why
	}
	if err := c.setWord(s, p.at, p.word); err != nil {
		return "not pinned: " + err.Error()
	}
	return "pinned " + p.word + " (" + p.from + ")"
}

// givePolicy places a policy for a server guarded by the baseline (wrap
// without --policy-dir before) and adds it to the entry.
func (o *Options) givePolicy(c *Config, s *Server) Outcome {
	pl, err := o.Policies.place(c.Client, c, s)
	if err != nil {
		return outcome("guarded", "already, by the baseline; policy: "+err.Error(), true)
	}
	if pl.path == "" {
		return outcome("guarded", "already; policy: baseline ("+pl.note+")", false)
	}
	if err := c.addPolicy(s, pl.path); err != nil {
		return outcome("error", err.Error(), true)
	}
	return outcome("policy", "added: "+pl.path+" ("+pl.note+")", false)
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
