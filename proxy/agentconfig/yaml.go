package agentconfig

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Continue's config.yaml (mcpServers: a list of {name, command, args})
// and Goose's (extensions: a map of NAME: {cmd, args}) are edited byte
// for byte, as Codex's TOML is: go-yaml's parser (github.com/goccy/go-yaml,
// with its comments) gives the line and column of every node, and only
// the bytes of the command value and of the args sequence's first
// elements change; comments, key order, quoting and layout stay. Each
// edit is checked by reading the edited file again: the entry must then
// run exactly what it should, or the file is not changed. An entry in
// flow style ({name: x, command: y}) or with a command that is not a
// plain one-line scalar is listed and left for the user.

// yamlEntry is where one entry's command and args are.
type yamlEntry struct {
	cmd      [2]int // the command scalar, quotes included
	cmdLine  int    // the end of the command's line (its '\n', or len)
	keyCol   int    // the column (bytes from its line's start) of the command key
	args     *yamlSeq
	argsLine [2]int // args: the start and end ('\n' included) of the key's line
}

// yamlSeq is an args sequence of scalars.
type yamlSeq struct {
	flow   bool
	open   int      // flow: the '['
	elems  [][2]int // each element's bytes, quotes included
	lines  []int    // block: the start of each element's line
	indent []byte   // block: what precedes the first element's '-' on its line
	words  []string // each element's value
}

// yamlEntries finds the command and args of each entry under key (a list
// of mappings named by their name: member, or a mapping of names) in src;
// cmdKey is the command's member name ("command", Goose's "cmd").
func yamlEntries(src []byte, key, cmdKey string) (map[string]*yamlEntry, error) {
	f, err := parser.ParseBytes(src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	out := map[string]*yamlEntry{}
	if len(f.Docs) != 1 {
		return out, nil
	}
	top, ok := unwrapNode(f.Docs[0].Body).(*ast.MappingNode)
	if !ok || top.IsFlowStyle {
		return out, nil
	}
	lines := lineStarts(src)
	for _, mv := range top.Values {
		if mv.Key.GetToken().Value != key {
			continue
		}
		switch v := unwrapNode(mv.Value).(type) {
		case *ast.SequenceNode:
			for i, item := range v.Values {
				m, ok := unwrapNode(item).(*ast.MappingNode)
				if !ok {
					continue
				}
				name := "#" + strconv.Itoa(i+1)
				if n := mappingValue(m, "name"); n != nil {
					if s, ok := n.(*ast.StringNode); ok && s.Value != "" {
						name = s.Value
					}
				}
				if e := yamlEntryOf(src, lines, m, cmdKey); e != nil {
					out[name] = e
				}
			}
		case *ast.MappingNode:
			for _, ev := range v.Values {
				if m, ok := unwrapNode(ev.Value).(*ast.MappingNode); ok {
					if e := yamlEntryOf(src, lines, m, cmdKey); e != nil {
						out[ev.Key.GetToken().Value] = e
					}
				}
			}
		}
	}
	return out, nil
}

// unwrapNode looks through a tag or an anchor to the node it marks.
func unwrapNode(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		default:
			return n
		}
	}
}

func mappingValue(m *ast.MappingNode, key string) ast.Node {
	for _, mv := range m.Values {
		if mv.Key.GetToken().Value == key {
			return mv.Value
		}
	}
	return nil
}

// yamlEntryOf locates the command and args of a block mapping; nil when
// its command is not a one-line scalar wrap can move.
func yamlEntryOf(src []byte, lines []int, m *ast.MappingNode, cmdKey string) *yamlEntry {
	if m.IsFlowStyle {
		return nil
	}
	e := &yamlEntry{}
	found := false
	for _, mv := range m.Values {
		k := mv.Key.GetToken()
		switch k.Value {
		case cmdKey:
			s, ok := unwrapNode(mv.Value).(*ast.StringNode)
			if !ok || s != mv.Value {
				return nil
			}
			start := offsetOf(src, lines, s.GetToken().Position.Line, s.GetToken().Position.Column)
			if start < 0 {
				return nil
			}
			end := scalarEnd(src, start, false)
			if end < 0 {
				return nil
			}
			e.cmd = [2]int{start, end}
			e.cmdLine = lineEnd(src, end)
			ks := offsetOf(src, lines, k.Position.Line, k.Position.Column)
			if ks < 0 {
				return nil
			}
			e.keyCol = ks - lines[k.Position.Line-1]
			found = true
		case "args":
			seq, ok := mv.Value.(*ast.SequenceNode)
			if !ok {
				return nil
			}
			a := &yamlSeq{flow: seq.IsFlowStyle}
			if a.flow {
				a.open = offsetOf(src, lines, seq.Start.Position.Line, seq.Start.Position.Column)
				if a.open < 0 || src[a.open] != '[' {
					return nil
				}
			}
			for _, v := range seq.Values {
				s, ok := v.(*ast.StringNode)
				if !ok {
					return nil
				}
				start := offsetOf(src, lines, s.GetToken().Position.Line, s.GetToken().Position.Column)
				if start < 0 {
					return nil
				}
				end := scalarEnd(src, start, a.flow)
				if end < 0 {
					return nil
				}
				a.elems = append(a.elems, [2]int{start, end})
				a.words = append(a.words, s.Value)
				if !a.flow {
					ls := lines[s.GetToken().Position.Line-1]
					dash := bytes.LastIndexByte(src[ls:start], '-')
					if dash < 0 || len(bytes.TrimSpace(src[ls:ls+dash])) != 0 {
						return nil // not one element per line
					}
					a.lines = append(a.lines, ls)
					if a.indent == nil {
						a.indent = slices.Clone(src[ls : ls+dash])
					}
				}
			}
			ks := offsetOf(src, lines, k.Position.Line, k.Position.Column)
			if ks < 0 {
				return nil
			}
			ls := lines[k.Position.Line-1]
			e.args, e.argsLine = a, [2]int{ls, min(lineEnd(src, ks)+1, len(src))}
		}
	}
	if !found {
		return nil
	}
	return e
}

// lineStarts is the byte offset of the start of each line.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// offsetOf is the byte offset of a 1-based line and column (in
// characters); -1 when it does not fall in src.
func offsetOf(src []byte, lines []int, line, col int) int {
	if line < 1 || line > len(lines) || col < 1 {
		return -1
	}
	i := lines[line-1]
	for c := 1; c < col; c++ {
		if i >= len(src) || src[i] == '\n' {
			return -1
		}
		_, n := utf8.DecodeRune(src[i:])
		i += n
	}
	if i >= len(src) {
		return -1
	}
	return i
}

// lineEnd is the offset of the '\n' ending the line at i, or len(src).
func lineEnd(src []byte, i int) int {
	if nl := bytes.IndexByte(src[i:], '\n'); nl >= 0 {
		return i + nl
	}
	return len(src)
}

// scalarEnd is the end of the one-line scalar starting at i: after its
// closing quote, or before the comment, the spaces or (in flow style) the
// ',', ']' or '}' that end a plain one; -1 for a scalar that does not end
// on its line.
func scalarEnd(src []byte, i int, flow bool) int {
	end := lineEnd(src, i)
	switch src[i] {
	case '"':
		for j := i + 1; j < end; j++ {
			switch src[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '\'':
		for j := i + 1; j < end; j++ {
			if src[j] == '\'' {
				if j+1 < end && src[j+1] == '\'' {
					j++
					continue
				}
				return j + 1
			}
		}
		return -1
	case '|', '>':
		return -1
	}
	j := i
	for ; j < end; j++ {
		if src[j] == '#' && j > i && (src[j-1] == ' ' || src[j-1] == '\t') {
			break
		}
		if flow && (src[j] == ',' || src[j] == ']' || src[j] == '}') {
			break
		}
	}
	return i + len(bytes.TrimRight(src[i:j], " \t\r"))
}

// addedArgs ends the args line wrap adds to an entry that had none, so
// that unwrap tells it from an args: [] of the user's.
const addedArgs = " # added by mcpguard wrap"

// yamlCmdKey is the member that holds an entry's command.
func (c *Config) yamlCmdKey() string {
	if c.Client == "goose" {
		return "cmd"
	}
	return "command"
}

// yamlEntry returns the byte positions of the entry s in the file as
// edited so far.
func (c *Config) yamlEntry(s *Server) (*yamlEntry, error) {
	entries, err := yamlEntries(c.Bytes(), c.Key, c.yamlCmdKey())
	if err != nil {
		return nil, err
	}
	e := entries[s.Name]
	if e == nil {
		return nil, errors.New("not a block mapping with a one-line " + c.yamlCmdKey() + ": wrap it by hand")
	}
	return e, nil
}

// guardYAML is guard for Continue and Goose: the command becomes exe and
// args gains [--policy P] -- and the original command's bytes in front,
// in the sequence's own style (a new flow line after the command when
// there is no args).
func (c *Config) guardYAML(s *Server, exe, policy, name string) error {
	e, err := c.yamlEntry(s)
	if err != nil {
		return err
	}
	src := c.Bytes()
	words := append(ownWords(policy, name), quote("--"), src[e.cmd[0]:e.cmd[1]])
	edits := []tomlEdit{{e.cmd[0], e.cmd[1], quote(exe)}}
	switch a := e.args; {
	case a != nil && a.flow && len(a.elems) > 0:
		at := a.elems[0][0]
		edits = append(edits, tomlEdit{at, at, append(bytes.Join(words, []byte(", ")), ", "...)})
	case a != nil && a.flow:
		edits = append(edits, tomlEdit{a.open + 1, a.open + 1, bytes.Join(words, []byte(", "))})
	case a != nil && len(a.elems) > 0:
		var b []byte
		for i, w := range words {
			if i > 0 {
				b = append(b, a.indent...)
			}
			b = append(append(append(b, "- "...), w...), '\n')
		}
		b = append(b, a.indent...)
		at := a.lines[0] + len(a.indent)
		edits = append(edits, tomlEdit{at, at, b})
	case a != nil:
		return errors.New("args is an empty block sequence: wrap it by hand")
	default:
		line := append(bytes.Repeat([]byte(" "), e.keyCol), "args: ["...)
		line = append(append(line, bytes.Join(words, []byte(", "))...), "]"+addedArgs...)
		if e.cmdLine < len(src) {
			edits = append(edits, tomlEdit{e.cmdLine + 1, e.cmdLine + 1, append(line, '\n')})
		} else {
			edits = append(edits, tomlEdit{len(src), len(src), append([]byte("\n"), line...)})
		}
	}
	return c.applyYAML(s, edits, IsGuardCommand(exe), func(t *Server) bool {
		return t.Kind == Guarded && t.Launcher == "" && t.Policy == policy && slices.Equal(t.Argv, s.Argv)
	})
}

// unguardYAML is unguard for Continue and Goose: the word after "--"
// returns to the command and the words up to it leave args; an args line
// left empty right after the command's line goes, as wrap added it.
func (c *Config) unguardYAML(s *Server) error {
	e, err := c.yamlEntry(s)
	if err != nil {
		return err
	}
	a := e.args
	if a == nil {
		return errors.New(`no args sequence of strings, so no "--" and server command`)
	}
	dash := slices.Index(a.words, "--")
	if dash < 0 || dash+1 >= len(a.words) {
		return errors.New(`no "--" followed by the server's command in args`)
	}
	src := c.Bytes()
	cmd := slices.Clone(src[a.elems[dash+1][0]:a.elems[dash+1][1]])
	edits := []tomlEdit{{e.cmd[0], e.cmd[1], cmd}}
	switch {
	case !a.flow && dash+2 < len(a.elems):
		from := a.lines[0] + len(a.indent)
		edits = append(edits, tomlEdit{from, a.lines[dash+2] + len(a.indent), nil})
	case !a.flow:
		return errors.New("args would be left empty: unwrap it by hand")
	case dash+2 < len(a.elems):
		edits = append(edits, tomlEdit{a.elems[0][0], a.elems[dash+2][0], nil})
	case e.argsLine[0] == e.cmdLine+1 && bytes.HasSuffix(bytes.TrimRight(src[e.argsLine[0]:e.argsLine[1]], "\n"), []byte("]"+addedArgs)):
		// The line wrap added after the command's.
		from, to := e.argsLine[0], e.argsLine[1]
		if to == len(src) && src[len(src)-1] != '\n' {
			from = e.cmdLine
		}
		edits = append(edits, tomlEdit{from, to, nil})
	default:
		edits = append(edits, tomlEdit{a.elems[0][0], a.elems[dash+1][1], nil})
	}
	return c.applyYAML(s, edits, IsGuardCommand(""), func(t *Server) bool {
		return t.Kind == Unguarded && slices.Equal(t.Argv, s.Argv)
	})
}

// applyYAML applies edits to the file as edited so far, then reads the
// result as the agent will: the entry s must satisfy ok, and every other
// entry must read as before, or nothing is changed.
func (c *Config) applyYAML(s *Server, edits []tomlEdit, isGuard func(string) bool, ok func(*Server) bool) error {
	before, err := parseReadOnly(c.Location, c.Bytes(), func(string) bool { return false })
	if err != nil {
		return err
	}
	prev := c.edited
	c.applyTOML(edits)
	after, err := parseReadOnly(c.Location, c.Bytes(), isGuard)
	if err == nil {
		err = errors.New("the edited file does not read back as intended: wrap it by hand")
		if len(after.Servers) == len(before.Servers) {
			err = nil
			plain, _ := parseReadOnly(c.Location, c.Bytes(), func(string) bool { return false })
			for i, t := range after.Servers {
				switch {
				case t.Name != before.Servers[i].Name:
					err = errors.New("the edited file does not read back as intended: wrap it by hand")
				case t.Name == s.Name:
					if !ok(&t) {
						err = errors.New("the edited entry does not read back as intended: wrap it by hand")
					}
				case !slices.Equal(plain.Servers[i].Argv, before.Servers[i].Argv):
					err = errors.New("the edit changed another entry: wrap it by hand")
				}
			}
		}
	}
	if err != nil {
		c.edited = prev
		if prev == nil {
			c.dirty = false
		}
		return err
	}
	return nil
}
