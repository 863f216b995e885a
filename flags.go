package main

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

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
