package agentconfig

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// exactVersion is a release number, not a range or a tag (latest, ^1).
var exactVersion = lazyregexp.New(`^v?[0-9]+(\.[0-9]+){0,2}([-+][0-9A-Za-z.+-]*)?$`)

// dockerValueFlags are docker/podman run options that take a value as the
// next word.
var dockerValueFlags = map[string]bool{
	"-e": true, "--env": true, "-v": true, "--volume": true, "--name": true, "--network": true,
	"-p": true, "--publish": true, "--mount": true, "-w": true, "--workdir": true, "-u": true,
	"--user": true, "--entrypoint": true, "--env-file": true, "-l": true, "--label": true,
	"--platform": true, "--pull": true, "-h": true, "--hostname": true, "--add-host": true,
	"--cap-add": true, "--cap-drop": true, "--security-opt": true, "--memory": true, "-m": true,
}

// Unpinned says why a server's command line runs whatever a registry
// serves at start, or "": npx/bunx/pnpm dlx/yarn dlx with a package
// without an exact version, uvx/pipx run/uv tool run with a package
// without ==VERSION (or @VERSION), docker/podman run with an image
// without an @sha256: digest. Each start may then run a release nobody
// reviewed (OWASP MCP04, supply chain): a pinned version, and mcpguard's
// lock on the tools, keep a takeover from reaching the agent unseen.
func Unpinned(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	base := strings.ToLower(filepath.Base(argv[0]))
	label := base // the runner as the line names it, for the message
	rest := argv[1:]
	switch base {
	case "pnpm", "yarn", "npm", "bun":
		if len(rest) == 0 || (rest[0] != "dlx" && rest[0] != "exec" && rest[0] != "x") {
			return ""
		}
		rest, base, label = rest[1:], "npx", base+" "+rest[0]
	case "uv":
		if len(rest) < 2 || rest[0] != "tool" || rest[1] != "run" {
			return ""
		}
		rest, base, label = rest[2:], "uvx", "uv tool run"
	case "pipx":
		if len(rest) == 0 || rest[0] != "run" {
			return ""
		}
		rest, base, label = rest[1:], "uvx", "pipx run"
	case "docker", "podman":
		if len(rest) == 0 || rest[0] != "run" {
			return ""
		}
		for i := 1; i < len(rest); i++ {
			w := rest[i]
			if strings.HasPrefix(w, "-") {
				if dockerValueFlags[w] {
					i++
				}
				continue
			}
			if !strings.Contains(w, "@sha256:") {
				return base + " run " + w + ": an image without a digest (@sha256:...)"
			}
			return ""
		}
		return ""
	}
	switch base {
	case "npx", "bunx", "pnpx":
		pkg := packageWord(rest, []string{"-p", "--package"}, nil)
		if pkg == "" || strings.HasPrefix(pkg, ".") || strings.HasPrefix(pkg, "/") {
			return ""
		}
		name, version := pkg, ""
		if i := strings.LastIndexByte(pkg, '@'); i > 0 {
			name, version = pkg[:i], pkg[i+1:]
		}
		if !exactVersion().MatchString(version) {
			return label + " " + name + ": no exact version (" + name + "@X.Y.Z)"
		}
	case "uvx":
		pkg := packageWord(rest, []string{"--from"}, []string{"--with", "--python", "-p", "--index", "--spec"})
		if pkg == "" || strings.ContainsAny(pkg, "/") {
			return ""
		}
		if _, v, ok := strings.Cut(pkg, "=="); ok && exactVersion().MatchString(v) {
			return ""
		}
		if i := strings.IndexByte(pkg, '@'); i > 0 && exactVersion().MatchString(pkg[i+1:]) {
			return ""
		}
		name := pkg
		if i := strings.IndexAny(name, "=<>~!@["); i > 0 {
			name = name[:i]
		}
		return label + " " + name + ": no exact version (" + name + "==X.Y.Z)"
	}
	return ""
}

// packageWord is the package a runner's words name: the value of one of
// the from options (-p PKG, --package=PKG, --from PKG), else the first
// word that is no option; options in skip take a value, skipped too.
func packageWord(words, from, skip []string) string {
	for i := 0; i < len(words); i++ {
		w := words[i]
		for _, f := range from {
			if w == f {
				if i+1 < len(words) {
					return words[i+1]
				}
				return ""
			}
			if v, ok := strings.CutPrefix(w, f+"="); ok {
				return v
			}
		}
		if !strings.HasPrefix(w, "-") {
			return w
		}
		if slices.Contains(skip, w) {
			i++
		}
	}
	return ""
}
