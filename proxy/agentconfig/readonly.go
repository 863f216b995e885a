package agentconfig

import (
	"fmt"
	"sort"

	"github.com/go-json-experiment/json"
	"github.com/goccy/go-yaml"
	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// parseReadOnly reads the servers of a config wrap does not edit (Codex's
// TOML, Continue's and Goose's YAML) so that status counts them: each
// entry is classified as a JSON entry would be. Codex: [mcp_servers.NAME]
// with command, args, url. Continue: mcpServers, a list of {name, command,
// args, type, url}. Goose: extensions, a map of {cmd, args, type, uri};
// a builtin extension runs inside Goose and is no server process.
func parseReadOnly(loc Location, b []byte, isGuard func(string) bool) (*Config, error) {
	c := &Config{Location: loc, src: b}
	var doc map[string]any
	var err error
	switch loc.Format {
	case "toml":
		err = toml.Unmarshal(b, &doc)
	case "yaml":
		err = yaml.Unmarshal(b, &doc)
	default:
		return nil, fmt.Errorf("unknown format %q", loc.Format)
	}
	if err != nil {
		return nil, fmt.Errorf("not valid %s: %v", loc.Format, err)
	}
	type named struct {
		name  string
		entry any
	}
	var entries []named
	switch v := doc[loc.Key].(type) {
	case nil:
	case map[string]any:
		for name, e := range v {
			entries = append(entries, named{name, e})
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	case []any:
		for i, e := range v {
			name := fmt.Sprintf("#%d", i+1)
			if m, ok := e.(map[string]any); ok {
				if n, ok := m["name"].(string); ok && n != "" {
					name = n
				}
			}
			entries = append(entries, named{name, e})
		}
	default:
		return nil, fmt.Errorf("%s is neither a table nor a list", loc.Key)
	}
	var editable map[string]*tomlEntry
	var editableYAML map[string]*yamlEntry
	switch loc.Format {
	case "toml":
		if editable, err = tomlEntries(b); err != nil {
			return nil, fmt.Errorf("not valid toml: %v", err)
		}
	case "yaml":
		cmdKey := "command"
		if loc.Client == "goose" {
			cmdKey = "cmd"
		}
		if editableYAML, err = yamlEntries(b, loc.Key, cmdKey); err != nil {
			return nil, fmt.Errorf("not valid yaml: %v", err)
		}
	}
	for _, e := range entries {
		s := Server{Name: e.name}
		m, ok := e.entry.(map[string]any)
		if !ok {
			s.Kind, s.Note = Unusable, "not a table"
			c.Servers = append(c.Servers, s)
			continue
		}
		if loc.Client == "goose" {
			m = gooseEntry(m)
		}
		if m == nil {
			s.Kind, s.Note = Unusable, "a builtin extension (runs inside Goose)"
			c.Servers = append(c.Servers, s)
			continue
		}
		j, err := json.Marshal(m, json.Deterministic(true))
		if err != nil {
			s.Kind, s.Note = Unusable, "not readable: "+err.Error()
			c.Servers = append(c.Servers, s)
			continue
		}
		v, err := hujson.Parse(j)
		if err != nil {
			s.Kind, s.Note = Unusable, "not readable: "+err.Error()
			c.Servers = append(c.Servers, s)
			continue
		}
		classify(&s, v, false, isGuard)
		if t := editable[e.name]; loc.Format == "toml" && (s.Kind == Guarded || s.Kind == Unguarded) && (t == nil || t.cmd[0] < 0) {
			s.Kind, s.Note = Unusable, "written as an inline table or with dotted keys: wrap it by hand"
		}
		if loc.Format == "yaml" && (s.Kind == Guarded || s.Kind == Unguarded) && editableYAML[e.name] == nil {
			s.Kind, s.Note = Unusable, "written in flow style or with a multi-line command: wrap it by hand"
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

// gooseEntry maps a Goose extension onto the common entry shape: cmd is
// command, uri is url; nil for a builtin one.
func gooseEntry(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "cmd":
			out["command"] = v
		case "uri":
			out["url"] = v
		case "type":
			switch v {
			case "builtin", "platform", "frontend", "inline_python":
				return nil
			case "stdio":
			default:
				out["type"] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}
