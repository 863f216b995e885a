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

// Shapes of a server entry.
const (
	// CommandArgs: {"command": "prog", "args": [...]} (most agents).
	CommandArgs = "command+args"
	// CommandArray: {"type": "local", "command": ["prog", ...]} (opencode).
	CommandArray = "command array"
)

// Agent is one agent's MCP configuration: where its files are, their
// format, the member that holds the servers, and the shape of an entry.
// Paths start with ~ (the home directory), $XDG (XDG_CONFIG_HOME), $MAC
// (~/Library/Application Support), $CODEX (CODEX_HOME) or $CLAUDE
// (CLAUDE_CONFIG_DIR, default the home directory); they may hold
// a * (profiles, extensions). Project paths are relative to the project
// directory. mcpguard runs on Linux and macOS: Windows paths are not
// listed.
type Agent struct {
	Name    string
	User    []string
	Project []string
	Format  string // "json" (comments and trailing commas allowed), "toml", "yaml"
	Key     string // the member of servers, by name
	Shape   string
	// Remote says how a remote (HTTP, SSE) entry looks: it is listed and
	// left alone.
	Remote string
	// Unsupported says why the files are read (status counts their
	// servers) but not edited.
	Unsupported string
	// EntryFiles: a file may also hold one server entry alone, named
	// after the file, or Claude Code's projects.DIR.mcpServers (the JSON
	// files Continue reads in its mcpServers folders).
	EntryFiles bool
}

// Agents is every agent wrap and status know, in the order they report
// them.
var Agents = []Agent{
	{Name: ClaudeDesktop, User: []string{"$MAC/Claude/claude_desktop_config.json", "$XDG/Claude/claude_desktop_config.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: "none (remote servers are connectors, set in the app)"},
	{Name: ClaudeCode, User: []string{"$CLAUDE/.claude.json"}, Project: []string{".mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"type": "http"|"sse", "url"`},
	{Name: Cursor, User: []string{"~/.cursor/mcp.json"}, Project: []string{".cursor/mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url"`},
	{Name: VSCode, User: []string{
		"$XDG/Code/User/mcp.json", "$XDG/Code/User/profiles/*/mcp.json",
		"$XDG/Code - Insiders/User/mcp.json", "$XDG/Code - Insiders/User/profiles/*/mcp.json",
		"$MAC/Code/User/mcp.json", "$MAC/Code/User/profiles/*/mcp.json",
		"$MAC/Code - Insiders/User/mcp.json", "$MAC/Code - Insiders/User/profiles/*/mcp.json"},
		Project: []string{".vscode/mcp.json"},
		Format:  "json", Key: "servers", Shape: CommandArgs, Remote: `"type": "http"|"sse", "url"`},
	{Name: Windsurf, User: []string{"~/.codeium/windsurf/mcp_config.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"serverUrl"`},
	{Name: Gemini, User: []string{"~/.gemini/settings.json", "~/.gemini/extensions/*/gemini-extension.json"}, Project: []string{".gemini/settings.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url" (SSE), "httpUrl"`},
	{Name: Codex, User: []string{"$CODEX/config.toml"}, Project: []string{".codex/config.toml"},
		Format: "toml", Key: "mcp_servers", Shape: CommandArgs, Remote: `url = "..."`},
	{Name: "cline", User: []string{
		"$XDG/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
		"$MAC/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
		"~/.cline/data/settings/cline_mcp_settings.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"type": "sse"|"streamableHttp", "url"`},
	{Name: "zed", User: []string{"$XDG/zed/settings.json", "~/.zed/settings.json"}, Project: []string{".zed/settings.json"},
		Format: "json", Key: "context_servers", Shape: CommandArgs, Remote: `"url"`},
	{Name: "opencode", User: []string{"$XDG/opencode/opencode.json", "$XDG/opencode/opencode.jsonc"}, Project: []string{"opencode.json", "opencode.jsonc"},
		Format: "json", Key: "mcp", Shape: CommandArray, Remote: `"type": "remote", "url"`},
	{Name: "lmstudio", User: []string{"~/.lmstudio/mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url"`},
	{Name: "junie", User: []string{"~/.junie/mcp/mcp.json"}, Project: []string{".junie/mcp/mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url"`},
	{Name: "amazonq", User: []string{"~/.aws/amazonq/mcp.json"}, Project: []string{".amazonq/mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url"`},
	{Name: "kiro", User: []string{"~/.kiro/settings/mcp.json"}, Project: []string{".kiro/settings/mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url"`},
	{Name: "copilot", User: []string{"~/.copilot/mcp-config.json"}, Project: []string{".github/mcp.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"type": "http"|"sse", "url"`},
	{Name: "crush", User: []string{"$XDG/crush/crush.json"}, Project: []string{"crush.json", ".crush.json"},
		Format: "json", Key: "mcp", Shape: CommandArgs, Remote: `"type": "http"|"sse", "url"`},
	{Name: "antigravity", User: []string{"~/.gemini/antigravity/mcp_config.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"serverUrl"`},
	{Name: "continue", User: []string{"~/.continue/config.yaml", "~/.continue/mcpServers/*.yaml"}, Project: []string{".continue/mcpServers/*.yaml"},
		Format: "yaml", Key: "mcpServers", Shape: CommandArgs, Remote: `"type": "sse"|"streamable-http", "url"`},
	{Name: "continue", User: []string{"~/.continue/mcpServers/*.json"}, Project: []string{".continue/mcpServers/*.json"},
		Format: "json", Key: "mcpServers", Shape: CommandArgs, Remote: `"url", "type": "sse"|"streamable-http"`, EntryFiles: true},
	{Name: "goose", User: []string{"$XDG/goose/config.yaml"},
		Format: "yaml", Key: "extensions", Shape: "cmd+args", Remote: `"type": "sse"|"streamable_http", "uri"`},
}

// Clients lists every client wrap knows, in the order it reports them.
var Clients = func() []string {
	var names []string
	for _, a := range Agents {
		if !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	return names
}()

// Env says where to look for configs. Tests point Home at a fixture.
type Env struct {
	Home       string   // the user's home directory
	ConfigHome string   // $XDG_CONFIG_HOME; default Home/.config
	CodexHome  string   // $CODEX_HOME; default Home/.codex
	ClaudeHome string   // $CLAUDE_CONFIG_DIR, where Claude Code keeps .claude.json; default Home
	Projects   []string // project directories to look into
	// AllProjects also looks into every project directory ~/.claude.json
	// names (Claude Code records each directory it ran in). Their files are
	// often committed, so wrap edits them only when asked; status lists
	// them all.
	AllProjects bool
}

// EnvFromOS reads HOME, XDG_CONFIG_HOME, CODEX_HOME and CLAUDE_CONFIG_DIR; home, when not
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
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
			e.ClaudeHome = d
		}
	}
	return e, nil
}

func (e Env) claudeHome() string {
	if e.ClaudeHome != "" {
		return e.ClaudeHome
	}
	return e.Home
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
	// Key names the object of servers: "mcpServers", "servers" (VS Code),
	// "mcp" (opencode, Crush), "context_servers" (Zed).
	Key string
	// Shape is the entry's shape: CommandArgs or CommandArray.
	Shape string
	// Format is "json", "toml" (Codex) or "yaml" (Continue, Goose).
	Format string
	// ClaudeProjects: ~/.claude.json, whose projects.<dir>.mcpServers
	// hold each project's local servers too.
	ClaudeProjects bool
	// EntryFile: the file may be one server entry alone (Agent.EntryFiles).
	EntryFile bool
	// Unsupported says why the file is listed but never edited.
	Unsupported string
}

// Locate returns the config files of the chosen clients (all when clients
// is empty) that exist, user files first, then those of each project.
func Locate(e Env, clients []string) []Location {
	want := func(c string) bool { return len(clients) == 0 || slices.Contains(clients, c) }
	var locs []Location
	seen := map[string]bool{}
	add := func(a Agent, path, scope string) {
		key := path
		if real, err := filepath.EvalSymlinks(path); err == nil {
			key = real
		}
		if seen[key] {
			return
		}
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			return
		}
		seen[key] = true
		locs = append(locs, Location{Client: a.Name, Path: path, Scope: scope, Key: a.Key, Shape: a.Shape, Format: a.Format,
			ClaudeProjects: a.Name == ClaudeCode && scope == "user" || a.EntryFiles, EntryFile: a.EntryFiles, Unsupported: a.Unsupported})
	}
	codexHome := e.CodexHome
	if codexHome == "" {
		codexHome = filepath.Join(e.Home, ".codex")
	}
	expand := strings.NewReplacer("~", e.Home, "$XDG", e.configHome(),
		"$MAC", filepath.Join(e.Home, "Library", "Application Support"), "$CODEX", codexHome, "$CLAUDE", e.claudeHome())
	each := func(a Agent, pattern, scope string) {
		if !strings.Contains(pattern, "*") {
			add(a, pattern, scope)
			return
		}
		matches, _ := filepath.Glob(pattern)
		sort.Strings(matches)
		for _, m := range matches {
			add(a, m, scope)
		}
	}
	for _, a := range Agents {
		if !want(a.Name) {
			continue
		}
		for _, p := range a.User {
			each(a, expand.Replace(p), "user")
		}
	}

	projects := append([]string(nil), e.Projects...)
	if e.AllProjects {
		projects = append(projects, claudeProjects(filepath.Join(e.claudeHome(), ".claude.json"))...)
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
		for _, a := range Agents {
			if !want(a.Name) {
				continue
			}
			for _, p := range a.Project {
				each(a, filepath.Join(dir, p), "project "+dir)
			}
		}
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
