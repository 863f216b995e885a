package agentconfig

import (
	"fmt"
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
	cfgs, errs := o.load()
	r := StatusReport{Since: so.Since, Errs: errs}
	for _, c := range cfgs {
		where := Display(c.Path, o.Env.Home)
		if c.Unsupported != "" {
			r.Rows = append(r.Rows, StatusRow{c.Client, "?", "not read", "-", "-", "-", where})
			r.Notes = append(r.Notes, fmt.Sprintf("%s: not supported: %s", where, c.Unsupported))
			continue
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
			case Unguarded:
				r.Unguarded++
				row.State = "UNGUARDED"
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
	fmt.Fprintf(&b, "%d guarded, %d unguarded stdio servers", r.Guarded, r.Unguarded)
	if r.Unguarded > 0 {
		b.WriteString(" (mcpguard wrap guards them)")
	}
	b.WriteByte('\n')
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
