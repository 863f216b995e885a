package agentconfig

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tailscale/hujson"
)

// Client names, as --client takes them.
const (
	ClaudeDesktop = "claude-desktop"
	ClaudeCode    = "claude-code"
	Cursor        = "cursor"
	VSCode        = "vscode"
	Windsurf      = "windsurf"
	Gemini        = "gemini"
	Codex         = "codex"
)

// Clients lists every client wrap knows, in the order it reports them.
var Clients = []string{ClaudeDesktop, ClaudeCode, Cursor, VSCode, Windsurf, Gemini, Codex}

// Env says where to look for configs. Tests point Home at a fixture.
type Env struct {
	Home       string   // the user's home directory
	ConfigHome string   // $XDG_CONFIG_HOME; default Home/.config
	CodexHome  string   // $CODEX_HOME; default Home/.codex
	Projects   []string // project directories to look into
	// AllProjects also looks into every project directory ~/.claude.json
	// names (Claude Code records each directory it ran in). Their files are
	// often committed, so wrap edits them only when asked; status lists
	// them all.
	AllProjects bool
}

// EnvFromOS reads HOME, XDG_CONFIG_HOME and CODEX_HOME; home, when not
// empty, replaces HOME (and the defaults derived from it).
func EnvFromOS(home string, projects []string) (Env, error) {
	e := Env{Home: home, Projects: projects}
	if e.Home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return e, err
		}
		e.Home = h
		if d := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
			e.ConfigHome = d
		}
		if d := os.Getenv("CODEX_HOME"); filepath.IsAbs(d) {
			e.CodexHome = d
		}
	}
	return e, nil
}

func (e Env) configHome() string {
	if e.ConfigHome != "" {
		return e.ConfigHome
	}
	return filepath.Join(e.Home, ".config")
}

// Location is one config file of one client.
type Location struct {
	Client string
	Path   string
	Scope  string // "user", or "project DIR"
	// Key names the object of servers: "mcpServers", or "servers" (VS Code).
	Key string
	// ClaudeProjects: ~/.claude.json, whose projects.<dir>.mcpServers
	// hold each project's local servers too.
	ClaudeProjects bool
	// Unsupported says why the file is listed but never edited.
	Unsupported string
}

// codexUnsupported is why Codex's config.toml is listed and left alone.
const codexUnsupported = "TOML: no well-kept Go library edits TOML without losing comments and layout; wrap its servers by hand"

// Locate returns the config files of the chosen clients (all when clients
// is empty) that exist, user files first, then those of each project.
func Locate(e Env, clients []string) []Location {
	want := func(c string) bool { return len(clients) == 0 || slices.Contains(clients, c) }
	var locs []Location
	seen := map[string]bool{}
	add := func(l Location) {
		if !want(l.Client) {
			return
		}
		key := l.Path
		if real, err := filepath.EvalSymlinks(l.Path); err == nil {
			key = real
		}
		if seen[key] {
			return
		}
		if fi, err := os.Stat(l.Path); err != nil || !fi.Mode().IsRegular() {
			return
		}
		seen[key] = true
		locs = append(locs, l)
	}
	h, cfg := e.Home, e.configHome()
	mac := filepath.Join(h, "Library", "Application Support")
	user := func(client, path, key string) Location {
		return Location{Client: client, Path: path, Scope: "user", Key: key}
	}
	add(user(ClaudeDesktop, filepath.Join(mac, "Claude", "claude_desktop_config.json"), "mcpServers"))
	add(user(ClaudeDesktop, filepath.Join(cfg, "Claude", "claude_desktop_config.json"), "mcpServers"))
	claudeJSON := filepath.Join(h, ".claude.json")
	l := user(ClaudeCode, claudeJSON, "mcpServers")
	l.ClaudeProjects = true
	add(l)
	add(user(Cursor, filepath.Join(h, ".cursor", "mcp.json"), "mcpServers"))
	for _, base := range []string{filepath.Join(cfg), mac} {
		for _, app := range []string{"Code", "Code - Insiders"} {
			add(user(VSCode, filepath.Join(base, app, "User", "mcp.json"), "servers"))
			profiles, _ := filepath.Glob(filepath.Join(base, app, "User", "profiles", "*", "mcp.json"))
			sort.Strings(profiles)
			for _, p := range profiles {
				add(user(VSCode, p, "servers"))
			}
		}
	}
	add(user(Windsurf, filepath.Join(h, ".codeium", "windsurf", "mcp_config.json"), "mcpServers"))
	add(user(Gemini, filepath.Join(h, ".gemini", "settings.json"), "mcpServers"))
	codexHome := e.CodexHome
	if codexHome == "" {
		codexHome = filepath.Join(h, ".codex")
	}
	l = user(Codex, filepath.Join(codexHome, "config.toml"), "mcp_servers")
	l.Unsupported = codexUnsupported
	add(l)

	projects := append([]string(nil), e.Projects...)
	if e.AllProjects {
		projects = append(projects, claudeProjects(claudeJSON)...)
	}
	seenDir := map[string]bool{}
	for _, dir := range projects {
		if !filepath.IsAbs(dir) {
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
		}
		dir = filepath.Clean(dir)
		if seenDir[dir] {
			continue
		}
		seenDir[dir] = true
		scope := "project " + dir
		add(Location{Client: ClaudeCode, Path: filepath.Join(dir, ".mcp.json"), Scope: scope, Key: "mcpServers"})
		add(Location{Client: Cursor, Path: filepath.Join(dir, ".cursor", "mcp.json"), Scope: scope, Key: "mcpServers"})
		add(Location{Client: VSCode, Path: filepath.Join(dir, ".vscode", "mcp.json"), Scope: scope, Key: "servers"})
		add(Location{Client: Gemini, Path: filepath.Join(dir, ".gemini", "settings.json"), Scope: scope, Key: "mcpServers"})
		add(Location{Client: Codex, Path: filepath.Join(dir, ".codex", "config.toml"), Scope: scope, Key: "mcp_servers", Unsupported: codexUnsupported})
	}
	return locs
}

// claudeProjects lists the project directories ~/.claude.json knows, so
// that their .mcp.json (and other clients' project files) are found too.
// A file that does not parse names none here; it is reported when read.
func claudeProjects(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	std, err := hujson.Standardize(b)
	if err != nil {
		return nil
	}
	var doc struct {
		Projects map[string]jsontext.Value `json:"projects"`
	}
	if json.Unmarshal(std, &doc) != nil {
		return nil
	}
	var dirs []string
	for dir := range doc.Projects {
		if filepath.IsAbs(dir) && !strings.ContainsRune(dir, 0) {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	return dirs
}

// KnownClient reports whether name is one of Clients.
func KnownClient(name string) bool { return slices.Contains(Clients, name) }
