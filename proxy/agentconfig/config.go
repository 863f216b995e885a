package agentconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tailscale/hujson"

	"github.com/mcpguard/mcpguard/proxy/launcher"
	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// Kind is what wrap can do with a server entry.
type Kind int

const (
	// Unguarded is a stdio server that runs without mcpguard: wrap guards it.
	Unguarded Kind = iota
	// Guarded runs mcpguard; its server's argv follows "--" in args.
	Guarded
	// Remote is an HTTP or SSE server: nothing runs locally to put
	// mcpguard in front of, so it is listed and left alone.
	Remote
	// Unusable is an entry wrap does not understand (Note says why); it is
	// listed and left alone.
	Unusable
)

func (k Kind) String() string {
	switch k {
	case Unguarded:
		return "unguarded"
	case Guarded:
		return "guarded"
	case Remote:
		return "remote"
	}
	return "skipped"
}

// Server is one entry of a config file.
type Server struct {
	Name    string
	Project string // Claude Code's per-project servers in ~/.claude.json: the project directory
	Pointer string // JSON pointer of the entry in its file
	Kind    Kind
	Note    string   // Remote: the transport; Unusable: why
	Argv    []string // the server's own command line (after "--" when guarded)
	Policy  string   // Guarded: the --policy given to mcpguard, if any
	Own     []string // Guarded: mcpguard's own arguments, before "--"
	Command string   // the entry's command, as written
	// CmdKey is the member that holds the program at Pointer: "" for
	// command, "path" in Zed's older {"command": {"path", "args"}} (then
	// Pointer is the inner object's).
	CmdKey string
	Cwd    string // the entry's cwd, if any
	// Launcher is the program that starts mcpguard when the entry does
	// not run it directly (npx, env, sh -c): the entry is guarded, and
	// unwrap leaves it for the user to undo by hand.
	Launcher string
}

// Config is one parsed config file.
type Config struct {
	Location
	Servers []Server

	src    []byte       // the file as read
	root   hujson.Value // edited in place
	edited []byte       // a TOML file as edited (applyTOML)
	dirty  bool
}

// errReadOnly marks a config whose mode forbids writing.
var errReadOnly = errors.New("read-only")

// Load reads and parses a config file and classifies its servers;
// isGuard tells whether a command is mcpguard.
func Load(loc Location, isGuard func(command string) bool) (*Config, error) {
	b, err := os.ReadFile(loc.Path)
	if err != nil {
		return nil, err
	}
	if loc.Format == "toml" || loc.Format == "yaml" {
		return parseReadOnly(loc, b, isGuard)
	}
	return parse(loc, b, isGuard)
}

// parse parses the text of a config file.
func parse(loc Location, b []byte, isGuard func(command string) bool) (*Config, error) {
	c := &Config{Location: loc, src: b}
	var err error
	if c.root, err = hujson.Parse(b); err != nil {
		return nil, fmt.Errorf("not valid JSON (comments and trailing commas allowed): %v", err)
	}
	// The standard form must also decode strictly: no duplicate names, valid
	// UTF-8, so that wrap reads each entry as the client will.
	std := c.root.Clone()
	std.Standardize()
	if err := json.Unmarshal(std.Pack(), new(jsontext.Value)); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, ok := c.root.Value.(*hujson.Object); !ok {
		return nil, errors.New("the top level is not a JSON object")
	}
	if loc.EntryFile && c.find("/"+escape(loc.Key)) == nil && c.find("/projects") == nil {
		// One server alone, named after its file (Continue's block files).
		s := Server{Name: strings.TrimSuffix(filepath.Base(loc.Path), ".json")}
		classify(&s, c.root, false, isGuard)
		c.Servers = append(c.Servers, s)
		return c, nil
	}
	if err := c.collect("/"+escape(loc.Key), "", isGuard); err != nil {
		return nil, err
	}
	if loc.ClaudeProjects {
		if projects, ok := c.find("/projects").(*hujson.Object); ok {
			for _, m := range projects.Members {
				dir := m.Name.Value.(hujson.Literal).String()
				ptr := "/projects/" + escape(dir) + "/mcpServers"
				if err := c.collect(ptr, dir, isGuard); err != nil {
					return nil, err
				}
			}
		}
	}
	return c, nil
}

// find returns the value at ptr, or nil.
func (c *Config) find(ptr string) hujson.ValueTrimmed {
	if v := c.root.Find(ptr); v != nil {
		return v.Value
	}
	return nil
}

// collect classifies the servers of the object at ptr (absent is empty).
func (c *Config) collect(ptr, project string, isGuard func(string) bool) error {
	v := c.find(ptr)
	if v == nil {
		return nil
	}
	obj, ok := v.(*hujson.Object)
	if !ok {
		return fmt.Errorf("%s is not an object", strings.TrimPrefix(ptr, "/"))
	}
	for _, m := range obj.Members {
		name := m.Name.Value.(hujson.Literal).String()
		s := Server{Name: name, Project: project, Pointer: ptr + "/" + escape(name)}
		classify(&s, m.Value, c.Shape == CommandArray, isGuard)
		c.Servers = append(c.Servers, s)
	}
	return nil
}

// windowsPath is a drive-letter or UNC path: a config from Windows.
var windowsPath = lazyregexp.New(`^([A-Za-z]:[\\/]|\\\\)`)

// remoteKeys are the members that give a server's URL: url (most clients),
// serverUrl (Windsurf), httpUrl (Gemini CLI).
var remoteKeys = []string{"url", "serverUrl", "httpUrl"}

// classify reads one entry; cmdArray is opencode's shape, where command
// is an array holding the program and its arguments.
func classify(s *Server, v hujson.Value, cmdArray bool, isGuard func(string) bool) {
	v = v.Clone()
	v.Standardize()
	var e map[string]jsontext.Value
	if err := json.Unmarshal(v.Pack(), &e); err != nil {
		s.Kind, s.Note = Unusable, "not an object"
		return
	}
	var typ string
	if t, ok := e["type"]; ok {
		if json.Unmarshal(t, &typ) != nil {
			s.Kind, s.Note = Unusable, "type is not a string"
			return
		}
	}
	for _, k := range remoteKeys {
		if _, ok := e[k]; ok {
			s.Kind, s.Note = Remote, remoteNote(typ, k)
			return
		}
	}
	switch typ {
	case "", "stdio", "local": // local: Copilot CLI, opencode
	case "http", "sse", "streamable-http", "streamableHttp", "ws", "remote":
		s.Kind, s.Note = Remote, typ
		return
	default:
		s.Kind, s.Note = Unusable, fmt.Sprintf("unknown type %q", typ)
		return
	}
	raw, ok := e["command"]
	if ok && !cmdArray && len(raw) > 0 && raw[0] == '{' {
		// Zed's older shape, {"command": {"path", "args", "env"}}: the
		// inner object is the entry, its path the program.
		var inner map[string]jsontext.Value
		if json.Unmarshal(raw, &inner) == nil {
			if path, isPath := inner["path"]; isPath {
				s.CmdKey, s.Pointer = "path", s.Pointer+"/command"
				e, raw = inner, path
				e["command"] = path
			}
		}
	}
	if !ok {
		s.Kind, s.Note = Unusable, "no command and no url"
		return
	}
	var command string
	var args []string
	if cmdArray {
		var argv []string
		if json.Unmarshal(raw, &argv) != nil || len(argv) == 0 || argv[0] == "" {
			s.Kind, s.Note = Unusable, "command is not a non-empty array of strings"
			return
		}
		command, args = argv[0], argv[1:]
	} else {
		if json.Unmarshal(raw, &command) != nil || command == "" {
			s.Kind, s.Note = Unusable, "command is not a string"
			if len(raw) > 0 && raw[0] == '{' {
				s.Note = "command is an object without a path; give command and args"
			}
			return
		}
		if raw, ok := e["args"]; ok {
			if json.Unmarshal(raw, &args) != nil {
				s.Kind, s.Note = Unusable, "args is not an array of strings"
				return
			}
		}
	}
	s.Command = command
	if raw, ok := e["cwd"]; ok {
		json.Unmarshal(raw, &s.Cwd)
	}
	if launcher, rest, ok := guardIn(command, args, isGuard); ok {
		s.Kind, s.Launcher = Guarded, launcher
		own, server, ok := splitGuardArgs(rest)
		if !ok {
			s.Note = `mcpguard without "--" before the server's command; unwrap leaves it alone`
		}
		s.Argv, s.Policy, s.Own = server, policyFlag(own), own
		return
	}
	s.Argv = append([]string{command}, args...)
	if windowsPath().MatchString(command) {
		s.Kind, s.Note = Unusable, "a Windows command; mcpguard does not run on Windows"
		return
	}
	if strings.ContainsAny(command, " \t") && !isFile(command) {
		// Some clients run command through a shell, some do not: the
		// split a shell would make is not ours to guess.
		s.Kind, s.Note = Unusable, "command holds spaces (a shell command line?); give the program in command and its words in args"
		return
	}
	s.Kind = Unguarded
}

func remoteNote(typ, key string) string {
	switch {
	case typ != "":
		return typ
	case key == "httpUrl":
		return "http"
	case key == "serverUrl":
		return "http/sse"
	}
	return "url"
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// splitGuardArgs splits mcpguard's arguments at the first "--", as
// mcpguard itself does.
func splitGuardArgs(args []string) (own, server []string, ok bool) {
	i := slices.Index(args, "--")
	if i < 0 {
		return args, nil, false
	}
	return args[:i], args[i+1:], i+1 < len(args)
}

// policyFlag returns the value of --policy (or -policy, =VALUE forms).
func policyFlag(own []string) string { return flagValue(own, "policy") }

// flagValue returns the value of mcpguard's flag --name (or -name, =VALUE
// forms) among own.
func flagValue(own []string, name string) string {
	for i, a := range own {
		for _, f := range []string{"--" + name, "-" + name} {
			if a == f && i+1 < len(own) {
				return own[i+1]
			}
			if v, ok := strings.CutPrefix(a, f+"="); ok {
				return v
			}
		}
	}
	return ""
}

// IsGuardCommand returns the test wrap uses to recognise mcpguard in an
// entry's command: exe itself, or any program named mcpguard, versioned
// or not (mcpguard-1.2, mcpguard_v2, mcpguard.exe: an upgrade installed
// beside the old one is still mcpguard, and is not wrapped again).
func IsGuardCommand(exe string) func(string) bool {
	return func(command string) bool {
		if command == exe {
			return true
		}
		base := command
		if i := strings.LastIndexAny(base, `/\`); i >= 0 {
			base = base[i+1:]
		}
		return guardName().MatchString(strings.ToLower(base))
	}
}

// guardName is mcpguard's program or package name, with an optional
// version (mcpguard-1.2, mcpguard@1.2.0, mcpguard_v2) and .exe.
var guardName = lazyregexp.New(`^mcpguard(?:[-_@.]?v?[0-9][0-9a-z.+_-]*)?(?:\.exe)?$`)

// guardIn finds mcpguard in an entry's command line, run directly or
// through launchers (launcher.Next: env, npx, bunx, pnpm dlx, yarn dlx,
// uvx, pipx run with mcpguard as the package, sh/bash/zsh/dash -c
// "mcpguard ..."). It returns the launcher ("" when
// mcpguard is the command) and mcpguard's own arguments. An entry
// guarded through a launcher must not be wrapped a second time, and a
// status that called it UNGUARDED would send the user to do just that.
func guardIn(command string, args []string, isGuard func(string) bool) (via string, rest []string, ok bool) {
	if isGuard(command) {
		return "", args, true
	}
	argv := append([]string{command}, args...)
	for depth := 0; depth < 4 && len(argv) > 0; depth++ {
		base := strings.ToLower(filepath.Base(argv[0]))
		next := launcher.Next(argv)
		if len(next) == 0 {
			return "", nil, false
		}
		if via == "" {
			via = base
		}
		if isGuard(next[0]) || guardName().MatchString(strings.ToLower(filepath.Base(packageName(next[0])))) {
			return via, next[1:], true
		}
		argv = next
	}
	return "", nil, false
}

// escape makes s one JSON pointer token (RFC 6901).
func escape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Display is path with the home directory shortened to ~.
func Display(path, home string) string {
	if home != "" {
		if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return path
}
