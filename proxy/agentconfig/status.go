package agentconfig

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/pins"
)

// StatusOptions are what status needs besides the configs.
type StatusOptions struct {
	// Rejections counts rejections by the server name the log records
	// (the policy's server:, else the base name of the server's command);
	// nil when there is no log to read.
	Rejections map[string]int
	// Since says which rejections Rejections counts, for the header.
	Since string
	// Lock reports the pin lock state of a guarded server; nil for
	// LockState.
	Lock func(s Server) string
}

// StatusReport is one row per configured server of every config found.
type StatusReport struct {
	Since     string // which rejections Rejected counts, for the header
	Rows      []StatusRow
	Notes     []string // configs not read and entries skipped, with why
	Guarded   int      // stdio servers mcpguard guards
	Unguarded int      // stdio servers it does not: shadow servers
	// Broken are guarded entries that cannot start (mcpguard, its
	// policy or its lock file missing): the agent fails to run them.
	Broken int
	// Unpinned are the stdio servers run from a package or image without
	// a pinned version (Unpinned): each start may run a new release.
	Unpinned int
	// Stale counts guarded servers whose lock file may no longer match
	// what they list (StaleLock).
	Stale int
	// Unknown are the configs status could not read, parse or does not
	// understand: their servers are not counted, and the summary says so.
	Unknown []string
	// Errs are the configs that could not be read.
	Errs []error
}

// StatusRow is one server: "-" where a column does not apply.
type StatusRow struct {
	Client, Server, State, Policy, Lock, Rejected, Config string
}

// Status reads every config found (in every project ~/.claude.json
// names, too) and says, per server, whether mcpguard guards it and with
// which policy, its lock state, and its rejections in the log.
func Status(o Options, so StatusOptions) StatusReport {
	o.Env.AllProjects = true
	cfgs, errs, failed := o.load()
	r := StatusReport{Since: so.Since, Errs: errs}
	for _, l := range failed {
		where := Display(l.Path, o.Env.Home)
		r.Rows = append(r.Rows, StatusRow{l.Client, "?", "UNKNOWN", "-", "-", "-", where})
		r.Unknown = append(r.Unknown, where)
	}
	for _, c := range cfgs {
		where := Display(c.Path, o.Env.Home)
		if c.Unsupported != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: read, not edited: %s", where, c.Unsupported))
		}
		for _, s := range c.Servers {
			row := StatusRow{c.Client, serverLabel(&s), s.Kind.String(), "-", "-", "-", where}
			switch s.Kind {
			case Guarded:
				r.Guarded++
				row.Policy = "baseline"
				if s.Policy != "" {
					row.Policy = Display(s.Policy, o.Env.Home)
				}
				if so.Lock != nil {
					row.Lock = so.Lock(s)
				} else {
					row.Lock = LockState(s)
				}
				if so.Rejections != nil {
					row.Rejected = strconv.Itoa(so.Rejections[LogName(s)])
				}
				if s.Launcher != "" {
					row.State = "guarded (" + s.Launcher + ")"
				}
				if why := StartProblem(s, row.Lock); why != "" {
					r.Guarded--
					r.Broken++
					row.State = "BROKEN"
					r.Notes = append(r.Notes, fmt.Sprintf("%s: %s: BROKEN: %s", where, serverLabel(&s), why))
				} else if why := StaleLock(s, o.Env.Home); why != "" {
					r.Stale++
					row.Lock += ", STALE"
					r.Notes = append(r.Notes, fmt.Sprintf("%s: %s: stale lock: %s", where, serverLabel(&s), why))
				}
			case Unguarded:
				r.Unguarded++
				row.State = "UNGUARDED"
			}
			if s.Kind == Guarded || s.Kind == Unguarded {
				if why := Unpinned(s.Argv); why != "" {
					r.Unpinned++
					r.Notes = append(r.Notes, fmt.Sprintf("%s: %s: unpinned: %s", where, serverLabel(&s), why))
				}
			}
			switch s.Kind {
			case Remote:
				row.State = "remote"
				row.Policy = s.Note
			case Unusable:
				r.Notes = append(r.Notes, fmt.Sprintf("%s: %s: %s", where, serverLabel(&s), s.Note))
			}
			r.Rows = append(r.Rows, row)
		}
	}
	return r
}

// String is the report as status prints it: a table, the notes, and a
// summary line.
func (r StatusReport) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	rej := "REJECTED"
	if r.Since != "" {
		rej += " (" + r.Since + ")"
	}
	fmt.Fprintf(tw, "CLIENT\tSERVER\tSTATE\tPOLICY\tLOCK\t%s\tCONFIG\n", rej)
	for _, w := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", w.Client, w.Server, w.State, w.Policy, w.Lock, w.Rejected, w.Config)
	}
	tw.Flush()
	for _, n := range r.Notes {
		b.WriteString(n + "\n")
	}
	fmt.Fprintf(&b, "%d guarded, %d unguarded, %d BROKEN stdio servers", r.Guarded, r.Unguarded, r.Broken)
	if r.Unguarded > 0 {
		b.WriteString(" (mcpguard wrap guards the unguarded)")
	}
	b.WriteByte('\n')
	if r.Unpinned > 0 {
		fmt.Fprintf(&b, "%d run a package without a pinned version: each start may run a release nobody reviewed (see the unpinned notes)\n", r.Unpinned)
	}
	if r.Stale > 0 {
		fmt.Fprintf(&b, "%d have a lock older than their program: mcpguard withholds what changed until the lock is written again (see the stale lock notes)\n", r.Stale)
	}
	if n := len(r.Unknown); n > 0 {
		fmt.Fprintf(&b, "UNKNOWN: %d config(s) not read, their servers not counted: %s\n", n, strings.Join(r.Unknown, ", "))
	}
	return b.String()
}

// LockState says how a guarded server's tool definitions are pinned:
// "session" without a lock file (what the server lists first in a session
// is pinned, later changes withheld), "N tools" (and prompts, resources)
// pinned by its policy's lock file, "missing" when the policy names a
// lock file that is not there (mcpguard then refuses to start: run
// mcpguard pin), "invalid" when it does not check, "?" when the policy
// does not load.
func LockState(s Server) string {
	if s.Policy == "" {
		return "session"
	}
	p, err := policy.LoadFileWithoutLock(s.Policy)
	if err != nil {
		return "?"
	}
	if p.Pins == "" {
		return "session"
	}
	st := pins.ReadState(p.Pins)
	switch {
	case !st.Exists:
		return "missing"
	case st.Err != nil:
		return "invalid"
	}
	out := fmt.Sprintf("%d tools", st.Tools)
	if st.Prompts > 0 {
		out += fmt.Sprintf(", %d prompts", st.Prompts)
	}
	if st.Resources > 0 {
		out += fmt.Sprintf(", %d resources", st.Resources)
	}
	return out
}

// LogName is the name a guarded server's events carry in the log: its
// policy's server: when the policy loads and names one, else the base
// name of its command (what mcpguard itself writes).
func LogName(s Server) string {
	if n := flagValue(s.Own, "server-name"); n != "" {
		return n
	}
	if s.Policy != "" {
		if p, err := policy.LoadFileWithoutLock(s.Policy); err == nil && p.Server != "" {
			return p.Server
		}
	}
	if len(s.Argv) == 0 {
		return ""
	}
	return filepath.Base(s.Argv[0])
}

// StartProblem says why a guarded entry cannot start, or "": the
// program it runs (mcpguard, or its launcher) is missing or not
// executable, its policy is missing or does not load, or its lock file
// (lock, as LockState gives it) is missing or invalid. Such an entry is
// no guard at all: the agent fails to start the server, and a status
// calling it guarded would be false assurance.
func StartProblem(s Server, lock string) string {
	if s.Command != "" {
		if strings.ContainsRune(s.Command, '/') {
			p := s.Command
			if !filepath.IsAbs(p) && s.Cwd != "" {
				p = filepath.Join(s.Cwd, p)
			}
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				return s.Command + " is missing"
			case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
				return s.Command + " is not executable"
			}
		} else if _, err := exec.LookPath(s.Command); err != nil {
			return s.Command + " is not on PATH"
		}
	}
	if s.Policy != "" {
		p := s.Policy
		if !filepath.IsAbs(p) && s.Cwd != "" {
			p = filepath.Join(s.Cwd, p)
		}
		if _, err := os.Stat(p); err != nil {
			return "its policy " + s.Policy + " is missing"
		}
		if _, err := policy.LoadFileWithoutLock(p); err != nil {
			return "its policy does not load: " + err.Error()
		}
	}
	switch lock {
	case "missing":
		return "its lock file is missing (run mcpguard pin)"
	case "invalid":
		return "its lock file does not check (run mcpguard pin --diff)"
	}
	return ""
}
