package agentconfig

import (
	"bytes"
	"errors"
	"sort"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex's config.toml is edited byte for byte: its [mcp_servers.NAME]
// tables are found with go-toml's parser, which gives the byte range of
// every value, and only the bytes of the command and args values change;
// comments, key order and layout stay. An entry written as an inline
// table or with dotted keys is listed and not edited.

// tomlEntry is where one [mcp_servers.NAME] table's values are.
type tomlEntry struct {
	cmd      [2]int // the command string, quotes included
	cmdEnd   int    // end of the command key/value
	args     *tomlArray
	argsFrom int // start of the args key/value
}

// tomlArray is an args array of strings: its brackets and elements.
type tomlArray struct {
	open  int      // the '['
	elems [][2]int // each element's bytes, quotes included
	words []string // each element's value
}

// tomlEdit replaces src[from:to] with text.
type tomlEdit struct {
	from, to int
	text     []byte
}

// tomlEntries finds the command and args of each [mcp_servers.NAME]
// table of src (a file that parsed).
func tomlEntries(src []byte) (map[string]*tomlEntry, error) {
	p := &unstable.Parser{}
	p.Reset(src)
	out := map[string]*tomlEntry{}
	var cur *tomlEntry
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			cur = nil
			key := keyParts(e.Key())
			if e.Kind == unstable.Table && len(key) == 2 && key[0] == "mcp_servers" {
				cur = &tomlEntry{cmd: [2]int{-1, -1}}
				out[key[1]] = cur
			}
		case unstable.KeyValue:
			if cur == nil {
				continue
			}
			key := keyParts(e.Key())
			if len(key) != 1 {
				continue
			}
			v := e.Value()
			switch {
			case key[0] == "command" && v.Kind == unstable.String:
				cur.cmd = [2]int{int(v.Raw.Offset), int(v.Raw.Offset + v.Raw.Length)}
				cur.cmdEnd = int(e.Raw.Offset + e.Raw.Length)
			case key[0] == "args" && v.Kind == unstable.Array:
				a := &tomlArray{open: -1}
				kv := src[e.Raw.Offset : e.Raw.Offset+e.Raw.Length]
				if eq := bytes.IndexByte(kv, '='); eq >= 0 {
					if ob := bytes.IndexByte(kv[eq:], '['); ob >= 0 {
						a.open = int(e.Raw.Offset) + eq + ob
					}
				}
				ok := a.open >= 0
				it := v.Children()
				for it.Next() {
					n := it.Node()
					if n.Kind == unstable.Comment {
						continue
					}
					if n.Kind != unstable.String {
						ok = false
						break
					}
					a.elems = append(a.elems, [2]int{int(n.Raw.Offset), int(n.Raw.Offset + n.Raw.Length)})
					a.words = append(a.words, string(n.Data))
				}
				if ok {
					cur.args, cur.argsFrom = a, int(e.Raw.Offset)
				}
			}
		}
	}
	return out, p.Error()
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// tomlEntry returns the byte positions of the entry s, found anew in the
// file as edited so far (edits are applied as they are made).
func (c *Config) tomlEntry(s *Server) (*tomlEntry, error) {
	entries, err := tomlEntries(c.Bytes())
	if err != nil {
		return nil, err
	}
	e := entries[s.Name]
	if e == nil || e.cmd[0] < 0 {
		return nil, errors.New("not a [mcp_servers." + s.Name + "] table with a command string (an inline table or dotted keys?): wrap it by hand")
	}
	return e, nil
}

// guardTOML is guard for Codex: command becomes exe and args gains
// [--policy P] -- and the original command's bytes in front.
func (c *Config) guardTOML(s *Server, exe, policy, name string) error {
	e, err := c.tomlEntry(s)
	if err != nil {
		return err
	}
	src := c.Bytes()
	words := append(ownWords(policy, name), quote("--"), src[e.cmd[0]:e.cmd[1]])
	prefix := bytes.Join(words, []byte(", "))
	edits := []tomlEdit{{e.cmd[0], e.cmd[1], quote(exe)}}
	switch {
	case e.args != nil && len(e.args.elems) > 0:
		at := e.args.elems[0][0]
		edits = append(edits, tomlEdit{at, at, append(prefix, ", "...)})
	case e.args != nil:
		edits = append(edits, tomlEdit{e.args.open + 1, e.args.open + 1, prefix})
	default:
		// a new line after the command's
		at := e.cmdEnd
		if nl := bytes.IndexByte(src[at:], '\n'); nl >= 0 {
			at += nl + 1
			edits = append(edits, tomlEdit{at, at, []byte("args = [" + string(prefix) + "]" + addedArgs + "\n")})
		} else {
			edits = append(edits, tomlEdit{len(src), len(src), []byte("\nargs = [" + string(prefix) + "]" + addedArgs)})
		}
	}
	c.applyTOML(edits)
	return nil
}

// unguardTOML is unguard for Codex: the word after "--" returns to
// command and the words up to it leave args; the args line wrap added
// (marked addedArgs) right after the command's line goes; a user's own
// args = [] stays.
func (c *Config) unguardTOML(s *Server) error {
	e, err := c.tomlEntry(s)
	if err != nil {
		return err
	}
	if e.args == nil {
		return errors.New(`no args array of strings, so no "--" and server command`)
	}
	a := e.args
	dash := -1
	for i, w := range a.words {
		if w == "--" {
			dash = i
			break
		}
	}
	if dash < 0 || dash+1 >= len(a.words) {
		return errors.New(`no "--" followed by the server's command in args`)
	}
	src := c.Bytes()
	cmd := append([]byte(nil), src[a.elems[dash+1][0]:a.elems[dash+1][1]]...)
	edits := []tomlEdit{{e.cmd[0], e.cmd[1], cmd}}
	if dash+2 < len(a.elems) {
		edits = append(edits, tomlEdit{a.elems[0][0], a.elems[dash+2][0], nil})
	} else {
		lineStart := e.cmdEnd
		if nl := bytes.IndexByte(src[lineStart:], '\n'); nl >= 0 {
			lineStart += nl + 1
		}
		end := bytes.IndexByte(src[a.elems[dash+1][1]:], '\n')
		closeLine := bytes.TrimSpace(src[a.elems[dash+1][1]:])
		if end >= 0 {
			closeLine = bytes.TrimSpace(src[a.elems[dash+1][1] : a.elems[dash+1][1]+end])
		}
		added := []byte("]" + addedArgs)
		switch {
		case e.argsFrom == lineStart && bytes.Equal(closeLine, added) && end >= 0:
			edits = append(edits, tomlEdit{lineStart, a.elems[dash+1][1] + end + 1, nil})
		case e.argsFrom > e.cmdEnd && end < 0 && bytes.Equal(closeLine, added) &&
			len(bytes.TrimSpace(src[e.cmdEnd:e.argsFrom])) == 0 && bytes.Count(src[e.cmdEnd:e.argsFrom], []byte("\n")) == 1:
			edits = append(edits, tomlEdit{e.cmdEnd, len(src), nil})
		default:
			edits = append(edits, tomlEdit{a.elems[0][0], a.elems[dash+1][1], nil})
		}
	}
	c.applyTOML(edits)
	return nil
}

// applyTOML applies non-overlapping edits to the file as edited so far.
func (c *Config) applyTOML(edits []tomlEdit) {
	src := append([]byte(nil), c.Bytes()...)
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	for _, e := range edits {
		src = append(src[:e.from], append(append([]byte(nil), e.text...), src[e.to:]...)...)
	}
	c.edited = src
	c.dirty = true
}
