package agentconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/policy/pins"
)

// installedNPX is the exact version npx installed for spec (a package
// name, possibly with a range or tag) and the package.json it read it
// from; "" when none is found.
func installedNPX(spec, name, home string) (version, file string) {
	cache := os.Getenv("npm_config_cache")
	if !filepath.IsAbs(cache) {
		cache = filepath.Join(home, ".npm")
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "_npx", "*", "package.json"))
	var found, files []string
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var pj struct {
			NPX struct {
				Packages []string `json:"packages"`
			} `json:"_npx"`
		}
		if json.Unmarshal(b, &pj) != nil || !slices.Equal(pj.NPX.Packages, []string{spec}) {
			continue
		}
		pkg := filepath.Join(filepath.Dir(p), "node_modules", filepath.FromSlash(name), "package.json")
		b, err = os.ReadFile(pkg)
		if err != nil {
			continue
		}
		var m struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &m) == nil && m.Name == name && exactVersion().MatchString(m.Version) && !slices.Contains(found, m.Version) {
			found, files = append(found, m.Version), append(files, pkg)
		}
	}
	if len(found) != 1 {
		return "", "" // none, or several that disagree: nothing to choose from
	}
	return found[0], files[0]
}

// npxSpec is the package word of an npx command line (no -p, no -c),
// and the package's name; ok is false for anything else.
func npxSpec(argv []string) (spec, name string, ok bool) {
	if len(argv) < 2 || strings.ToLower(filepath.Base(argv[0])) != "npx" {
		return "", "", false
	}
	for _, w := range argv[1:] {
		if w == "-p" || w == "--package" || strings.HasPrefix(w, "--package=") || w == "-c" || w == "--call" {
			return "", "", false
		}
		if !strings.HasPrefix(w, "-") {
			name = w
			if i := strings.LastIndexByte(w, '@'); i > 0 {
				name = w[:i]
			}
			return w, name, true
		}
	}
	return "", "", false
}

// interpreters run the script named by their first argument.
var interpreters = map[string]bool{"node": true, "nodejs": true, "python": true, "python3": true, "deno": true, "bun": true, "ruby": true, "perl": true}

// serverProgram is the file whose change means a different server: the
// package npx installed for the spec, the script an interpreter runs
// (an absolute path), or the program itself (found on PATH, symlinks
// followed); "" when it cannot be known without running anything (uvx,
// docker, a package npx has not installed).
func serverProgram(argv []string, home string) string {
	if len(argv) == 0 {
		return ""
	}
	if spec, name, ok := npxSpec(argv); ok {
		_, file := installedNPX(spec, name, home)
		return file
	}
	base := strings.ToLower(filepath.Base(argv[0]))
	switch {
	case interpreters[base]:
		for _, w := range argv[1:] {
			if strings.HasPrefix(w, "-") {
				continue
			}
			if filepath.IsAbs(w) {
				return w
			}
			return ""
		}
		return ""
	case Unpinned(argv) != "", base == "npx", base == "uvx", base == "docker", base == "podman", base == "pipx", base == "uv", base == "bunx", base == "pnpm", base == "yarn":
		return ""
	}
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(prog); err == nil {
		prog = real
	}
	return prog
}

// StaleLock says why a guarded server's lock file may no longer match
// what the server lists, or "": known without starting the server, a
// lock is stale when the server's program (serverProgram: the package
// npx installed, the script, the binary) was modified after the lock was
// written — an upgrade or reinstall that may list other tools, which
// mcpguard would then withhold until the lock is written again. The
// server's own version is not compared: serverInfo.version often differs
// from the package's.
func StaleLock(s Server, home string) string {
	if s.Policy == "" {
		return ""
	}
	p, err := policy.LoadFileWithoutLock(s.Policy)
	if err != nil || p.Pins == "" {
		return ""
	}
	st := pins.ReadState(p.Pins)
	if !st.Exists || st.Err != nil || st.Written.IsZero() {
		return ""
	}
	prog := serverProgram(s.Argv, home)
	if prog == "" {
		return ""
	}
	fi, err := os.Stat(prog)
	if err != nil || !fi.ModTime().After(st.Written) {
		return ""
	}
	return Display(prog, home) + " changed (" + fi.ModTime().UTC().Format(time.RFC3339) + ") after the lock was written (" +
		st.Written.UTC().Format(time.RFC3339) + "): run mcpguard pin --diff"
}
