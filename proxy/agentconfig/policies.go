package agentconfig

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpguard/mcpguard/policy"
	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// shipped maps a shipped policy to the names its server goes by on a
// command line: npm packages (with or without @version), PyPI packages
// run by uvx or pipx, their Python modules (python -m), the binaries the
// packages install, and container images.
//
// @modelcontextprotocol/server-github is not matched to github.yaml: that
// policy is written against github/github-mcp-server's tool names, and
// with unknown_tools: deny it would refuse the tools the retired npm
// server names differently.
var shipped = []struct {
	file  string
	names []string
}{
	{"filesystem.yaml", []string{"@modelcontextprotocol/server-filesystem", "mcp-server-filesystem"}},
	{"memory.yaml", []string{"@modelcontextprotocol/server-memory", "mcp-server-memory"}},
	{"everything.yaml", []string{"@modelcontextprotocol/server-everything", "mcp-server-everything"}},
	{"git.yaml", []string{"mcp-server-git", "mcp_server_git"}},
	{"fetch.yaml", []string{"mcp-server-fetch", "mcp_server_fetch"}},
	{"github.yaml", []string{"github-mcp-server", "ghcr.io/github/github-mcp-server"}},
	{"playwright.yaml", []string{"@playwright/mcp", "playwright-mcp"}},
	{"chrome-devtools.yaml", []string{"chrome-devtools-mcp"}},
	{"desktop-commander.yaml", []string{"@wonderwhy-er/desktop-commander", "desktop-commander"}},
	{"context7.yaml", []string{"@upstash/context7-mcp", "context7-mcp"}},
	{"notion.yaml", []string{"@notionhq/notion-mcp-server", "notion-mcp-server"}},
	{"sequential-thinking.yaml", []string{"@modelcontextprotocol/server-sequential-thinking", "mcp-server-sequential-thinking"}},
	{"puppeteer.yaml", []string{"@modelcontextprotocol/server-puppeteer", "mcp-server-puppeteer"}},
	{"postgres.yaml", []string{"@modelcontextprotocol/server-postgres", "mcp-server-postgres"}},
	{"slack.yaml", []string{"@modelcontextprotocol/server-slack", "mcp-server-slack"}},
	{"brave-search.yaml", []string{"@modelcontextprotocol/server-brave-search", "mcp-server-brave-search"}},
	{"gitlab.yaml", []string{"@modelcontextprotocol/server-gitlab", "mcp-server-gitlab"}},
	{"supabase.yaml", []string{"@supabase/mcp-server-supabase", "mcp-server-supabase"}},
	{"sentry.yaml", []string{"@sentry/mcp-server", "sentry-mcp"}},
	{"firecrawl.yaml", []string{"firecrawl-mcp"}},
	{"kubernetes.yaml", []string{"mcp-server-kubernetes"}},
}

// ShippedPolicy returns the shipped policy file written for the server
// argv runs, or "".
func ShippedPolicy(argv []string) string {
	for _, word := range argv {
		name := packageName(word)
		for _, s := range shipped {
			for _, n := range s.names {
				if name == n {
					return s.file
				}
			}
		}
	}
	return ""
}

// packageName reduces one word of a command line to the name it may
// give: a path to its base name, an npm spec to its package, an image to
// its repository, a PyPI spec to its project.
func packageName(w string) string {
	if strings.HasPrefix(w, "-") {
		// --from=pkg, -m=pkg
		if _, v, ok := strings.Cut(w, "="); ok {
			w = v
		} else {
			return ""
		}
	}
	// docker image: registry/path:tag or @sha256:...
	if strings.HasPrefix(w, "ghcr.io/") || strings.HasPrefix(w, "docker.io/") {
		if i := strings.IndexAny(w, ":@"); i >= 0 {
			w = w[:i]
		}
		return w
	}
	// npm: @scope/name@version, name@version
	if strings.HasPrefix(w, "@") {
		if i := strings.LastIndexByte(w, '@'); i > 0 {
			w = w[:i]
		}
		return w
	}
	if i := strings.IndexByte(w, '@'); i > 0 {
		w = w[:i]
	}
	// PyPI: name==1.2, name>=1
	if i := strings.IndexAny(w, "=<>~!["); i > 0 {
		w = w[:i]
	}
	if i := strings.LastIndexAny(w, `/\`); i >= 0 {
		w = w[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSuffix(w, ".exe"), ".cmd")
}

// Policies places policies for the servers wrap guards.
type Policies struct {
	Dir     string // absolute; "" for the baseline everywhere
	Shipped fs.FS  // the shipped policies, policies/*.yaml
	// Init, when set (--init), writes a starter policy to out for a server
	// no shipped policy fits: `mcpguard init`, which starts the server to
	// list its tools.
	Init   func(argv []string, out string) error
	DryRun bool

	named map[string]bool // file names given out in this run
}

// placed says what policy a server got.
type placed struct {
	path string // "" for the baseline
	note string // where it came from
}

// place returns the policy for a server of client c, writing it into Dir
// unless a file of that name is there already (it is then used as it is:
// a policy there is the user's to edit, never overwritten).
func (p *Policies) place(client string, c *Config, s *Server) (placed, error) {
	if p.Dir == "" {
		return placed{note: "baseline"}, nil
	}
	name := policyFileName(client, c, s)
	// Two entries of one run that reduce to the same name (Git and git)
	// get their own files.
	if p.named == nil {
		p.named = map[string]bool{}
	}
	for i := 2; p.named[strings.ToLower(name)]; i++ {
		name = strings.TrimSuffix(policyFileName(client, c, s), ".yaml") + "-" + strconv.Itoa(i) + ".yaml"
	}
	p.named[strings.ToLower(name)] = true
	path := filepath.Join(p.Dir, name)
	if _, err := os.Stat(path); err == nil {
		return placed{path, "existing file"}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return placed{}, err
	}
	var text []byte
	var note string
	if file := ShippedPolicy(s.Argv); file != "" && p.Shipped != nil {
		b, err := fs.ReadFile(p.Shipped, file)
		if err != nil {
			return placed{}, err
		}
		text, note = b, "copy of shipped "+file
		text = setServer(text, strings.TrimSuffix(name, ".yaml"))
		if roots := policy.ServerDirsIn(s.Argv, entryDir(c, s)).Abs(); len(roots) > 0 {
			if t, ok := setRoots(text, roots); ok {
				text, note = t, note+", roots set to the server's directories"
			}
		} else if entryDir(c, s) == "" && relativeArg(s.Argv) {
			// A relative path or a client variable: only the agent knows
			// what it means when it starts the server.
			if t, ok := followClientRoots(text); ok {
				text, note = t, note+", roots follow the agent (client_roots: the server's directories as the agent starts it, and the roots the client announces)"
			}
		} else if rootsLine().Match(text) {
			note += "; review its roots: the server names no existing directory wrap can know"
		}
	} else if p.Init != nil {
		if p.DryRun {
			return placed{path, "starter policy from init; not run: dry run"}, nil
		}
		if err := os.MkdirAll(p.Dir, 0o755); err != nil {
			return placed{}, err
		}
		if err := p.Init(s.Argv, path); err != nil {
			return placed{note: "baseline"}, err
		}
		if b, err := os.ReadFile(path); err == nil {
			if t := setServer(b, strings.TrimSuffix(name, ".yaml")); !bytes.Equal(t, b) {
				os.WriteFile(path, t, 0o644)
			}
		}
		return placed{path, "starter policy from init (mode: audit; review it)"}, nil
	} else {
		return placed{note: "no shipped policy fits; --init writes a starter"}, nil
	}
	if p.DryRun {
		return placed{path, note + "; not written: dry run"}, nil
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return placed{}, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return placed{}, err
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		os.Remove(path)
		return placed{}, err
	}
	if err := f.Close(); err != nil {
		return placed{}, err
	}
	return placed{path, note}, nil
}

// entryDir is the directory the agent starts the entry's server in, when
// the config says: its cwd, else its project (a project file, or a Claude
// Code project's local server); "" when only the agent knows (a user
// file's entry runs wherever the agent was started).
func entryDir(c *Config, s *Server) string {
	project := s.Project
	if project == "" && strings.HasPrefix(c.Scope, "project ") {
		project = strings.TrimPrefix(c.Scope, "project ")
	}
	switch {
	case filepath.IsAbs(s.Cwd):
		return s.Cwd
	case s.Cwd != "" && !strings.Contains(s.Cwd, "${") && project != "":
		return filepath.Join(project, s.Cwd)
	case s.Cwd != "":
		return "" // a client variable, or relative to an unknown directory
	}
	return project
}

// relativeArg says whether a word after the command is a relative path
// or holds a client variable (${workspaceFolder}).
func relativeArg(argv []string) bool {
	for _, a := range argv[min(1, len(argv)):] {
		if strings.Contains(a, "${") || a == "." || a == ".." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") {
			return true
		}
	}
	return false
}

// serverLine is a policy's top-level server: line.
var serverLine = lazyregexp.New(`(?m)^server: .*$`)

// setServer names the policy copy of one entry after the entry
// (CLIENT[-PROJECT-HASH]-NAME), so that the log, tail, stats and status
// count each entry's rejections apart rather than every copy of one
// shipped policy together. Text with no or several server: lines, or
// that no longer loads, is left alone.
func setServer(text []byte, name string) []byte {
	if len(serverLine().FindAllIndex(text, -1)) != 1 {
		return text
	}
	out := serverLine().ReplaceAll(text, append([]byte("server: "), quote(name)...))
	if _, err := policy.Load("policy", out, os.LookupEnv); err != nil {
		return text
	}
	return out
}

// rootsLine is the one path_scope roots line of a shipped policy.
var rootsLine = lazyregexp.New(`(?m)^(\s*roots: )\[[^\]\n]*\]$`)

// setRoots points the path_scope roots of a shipped policy at the
// server's own directories (what it was started with), so the copy
// neither refuses the server's ordinary work nor allows more. Shipped
// policies have at most one roots line (TestShippedRootsLines); text with
// none or several is left alone. The result must load, or the copy keeps
// the shipped roots.
func setRoots(text []byte, roots []string) ([]byte, bool) {
	if len(rootsLine().FindAllIndex(text, -1)) != 1 {
		return text, false
	}
	quoted := make([]string, len(roots))
	for i, r := range roots {
		quoted[i] = string(quote(r))
	}
	out := rootsLine().ReplaceAllFunc(text, func(line []byte) []byte {
		m := rootsLine().FindSubmatch(line)
		return append(append([]byte(nil), m[1]...), "["+strings.Join(quoted, ", ")+"] # the server's directories (mcpguard wrap)"...)
	})
	if _, err := policy.Load("policy", out, os.LookupEnv); err != nil {
		return text, false
	}
	return out, true
}

// followClientRoots replaces the path_scope roots of a shipped policy with
// client_roots: true, for an entry whose directory only the agent knows
// (${workspaceFolder}, "."): the copy's roots are then the directories
// the agent gives the server. The result must load.
func followClientRoots(text []byte) ([]byte, bool) {
	if len(rootsLine().FindAllIndex(text, -1)) != 1 {
		return text, false
	}
	out := rootsLine().ReplaceAllFunc(text, func(line []byte) []byte {
		m := rootsLine().FindSubmatch(line)
		indent := bytes.TrimSuffix(m[1], []byte("roots: "))
		return append(append([]byte(nil), indent...), "client_roots: true # the directories the agent gives the server (mcpguard wrap)"...)
	})
	if _, err := policy.Load("policy", out, os.LookupEnv); err != nil {
		return text, false
	}
	return out, true
}

// policyFileName is CLIENT[-PROJECT-HASH]-SERVER.yaml, reduced to safe
// characters: one file per entry, so two entries of the same name with
// different arguments (roots) do not share a starter policy.
func policyFileName(client string, c *Config, s *Server) string {
	parts := []string{client}
	project := s.Project
	if project == "" && strings.HasPrefix(c.Scope, "project ") {
		project = strings.TrimPrefix(c.Scope, "project ")
	}
	if project != "" {
		// the base name for the reader, a hash so ~/a/app and ~/b/app differ
		sum := sha256.Sum256([]byte(project))
		parts = append(parts, filepath.Base(project)+"-"+hex.EncodeToString(sum[:3]))
	}
	parts = append(parts, s.Name)
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('-')
		}
		for _, r := range strings.ToLower(p) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
				b.WriteRune(r)
			default:
				b.WriteByte('-')
			}
		}
	}
	name := strings.Trim(b.String(), ".-")
	if name == "" {
		name = "server"
	}
	return name + ".yaml"
}
