package agentconfig

import (
	"fmt"
	"path/filepath"
	"strconv"
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

// Status writes one line per configured server of every config found
// (in every project ~/.claude.json names, too):
// client and file, whether mcpguard guards it and with which policy, its
// lock state, and its rejections in the log. It returns 1 when a config
// could not be read.
func Status(o Options, so StatusOptions) (int, error) {
	o.Env.AllProjects = true
	cfgs, errs := o.load()
	status := 0
	for _, err := range errs {
		fmt.Fprintf(o.Stderr, "mcpguard: %v\n", err)
		status = 1
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	rej := "REJECTED"
	if so.Since != "" {
		rej += " (" + so.Since + ")"
	}
	fmt.Fprintf(tw, "CLIENT\tSERVER\tSTATE\tPOLICY\tLOCK\t%s\tCONFIG\n", rej)
	var notes []string
	guarded, unguarded := 0, 0
	for _, c := range cfgs {
		where := Display(c.Path, o.Env.Home)
		if c.Unsupported != "" {
			fmt.Fprintf(tw, "%s\t?\tnot read\t-\t-\t-\t%s\n", c.Client, where)
			notes = append(notes, fmt.Sprintf("%s: not supported: %s", where, c.Unsupported))
			continue
		}
		for _, s := range c.Servers {
			state, pol, lock, count := s.Kind.String(), "-", "-", "-"
			switch s.Kind {
			case Guarded:
				guarded++
				pol = "baseline"
				if s.Policy != "" {
					pol = Display(s.Policy, o.Env.Home)
				}
				if so.Lock != nil {
					lock = so.Lock(s)
				} else {
					lock = LockState(s)
				}
				if so.Rejections != nil {
					count = strconv.Itoa(so.Rejections[LogName(s)])
				}
			case Unguarded:
				unguarded++
				state = "UNGUARDED"
			case Remote:
				state = "remote"
				pol = s.Note
			case Unusable:
				notes = append(notes, fmt.Sprintf("%s: %s: %s", where, serverLabel(&s), s.Note))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Client, serverLabel(&s), state, pol, lock, count, where)
		}
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(o.Stdout, n)
	}
	fmt.Fprintf(o.Stdout, "%d guarded, %d unguarded stdio servers", guarded, unguarded)
	if unguarded > 0 {
		fmt.Fprint(o.Stdout, " (mcpguard wrap guards them)")
	}
	fmt.Fprintln(o.Stdout)
	return status, nil
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
