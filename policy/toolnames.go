package policy

import (
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
)

// ToolNameWarnings compares the exact tool names a policy writes (under
// tools: and in ingress rules' tools lists) with the tools a server lists
// (a tools/list result, {"tools":[...]}), and says which the server does
// not have: a typo (read_txt_file) makes an entry that never applies, and
// with unknown_tools: deny the real tool is refused. Globs are not
// compared. Each warning is one line.
func (p *Policy) ToolNameWarnings(toolsList []byte) ([]string, error) {
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(toolsList, &list); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	var names []string
	for _, t := range list.Tools {
		have[t.Name] = true
		names = append(names, t.Name)
	}
	where := map[string]string{} // name → the first entry that writes it
	for _, t := range p.tools {
		if !t.glob {
			if _, ok := where[t.pattern]; !ok {
				where[t.pattern] = t.rule
			}
		}
	}
	for _, r := range p.ingress {
		for _, name := range r.tools {
			if !isGlob(name) {
				if _, ok := where[name]; !ok {
					where[name] = r.rule + ".tools"
				}
			}
		}
	}
	var out []string
	for name, entry := range where {
		if have[name] {
			continue
		}
		w := entry + ": the server has no tool " + clean(name)
		if s := suggest(name, names); s != "" {
			w += "; did you mean " + s + "?"
		}
		out = append(out, w)
	}
	sort.Strings(out)
	return out, nil
}

// isGlob says whether a tool name written in a policy is a glob.
func isGlob(name string) bool { return strings.ContainsAny(name, "*?[") }
