package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/tailscale/hujson"
)

// The edits are JSON Patch operations (RFC 6902) applied by hujson, which
// changes the values it is told to and leaves every other byte of the file
// alone: comments, member order, indentation, trailing commas. hujson
// leaves inserted array elements without whitespace; wrap gives them the
// separator the array already uses, and moves the whitespace (and any
// comment) that preceded the first argument to the first inserted one,
// so that unwrap can put it back and the file comes back byte for byte.

// guard rewrites the entry at s.Pointer to run exe [--policy policy] --
// followed by the original command and args. The original command's
// bytes are moved into args unchanged (escapes and all).
func (c *Config) guard(s *Server, exe, policy, name string) error {
	if c.Shape == CommandArray {
		return c.guardArray(s, exe, policy, name)
	}
	if c.Format == "toml" {
		return c.guardTOML(s, exe, policy, name)
	}
	if c.Format == "yaml" {
		return c.guardYAML(s, exe, policy, name)
	}
	obj, err := c.entry(s.Pointer)
	if err != nil {
		return err
	}
	cmdKey := s.cmdKey()
	cmd := member(obj, cmdKey)
	if cmd < 0 {
		return errors.New("no " + cmdKey)
	}
	prefix := append(ownWords(policy, name), quote("--"), slices.Clone(obj.Members[cmd].Value.Value.(hujson.Literal)))

	ops := []patchOp{{Op: "replace", Path: s.Pointer + "/" + cmdKey, Value: quote(exe)}}
	ai := member(obj, "args")
	var lead, sep, arrAfter hujson.Extra
	// hujson moves comments next to an insertion point onto the inserted
	// value; wrap keeps them where they were.
	objAfter := slices.Clone(obj.AfterExtra)
	lastAfter := slices.Clone(obj.Members[len(obj.Members)-1].Value.AfterExtra)
	if ai < 0 {
		ops = append(ops, patchOp{Op: "add", Path: s.Pointer + "/args", Value: array(prefix)})
	} else {
		arr, ok := obj.Members[ai].Value.Value.(*hujson.Array)
		if !ok {
			return errors.New("args is not an array")
		}
		arrAfter = slices.Clone(arr.AfterExtra)
		if len(arr.Elements) > 0 {
			lead = slices.Clone(arr.Elements[0].BeforeExtra)
		}
		sep = separator(lead)
		if len(arr.Elements) > 1 && len(bytes.TrimSpace(arr.Elements[1].BeforeExtra)) == 0 {
			// the array's own separator: "", " " or a line break and indentation
			sep = slices.Clone(arr.Elements[1].BeforeExtra)
		}
		for i := len(prefix) - 1; i >= 0; i-- {
			ops = append(ops, patchOp{Op: "add", Path: s.Pointer + "/args/0", Value: prefix[i]})
		}
	}
	if err := c.patch(ops); err != nil {
		return err
	}
	if obj, err = c.entry(s.Pointer); err != nil {
		return err
	}
	if ai < 0 {
		// The new member goes last, laid out like the one before it; a
		// trailing comma stays trailing.
		n := len(obj.Members)
		prev, added := &obj.Members[n-2], &obj.Members[n-1]
		added.Name.BeforeExtra = whitespaceOnly(prev.Name.BeforeExtra)
		if n == 2 && !bytes.Contains(added.Name.BeforeExtra, []byte("\n")) {
			// {"command": "x"}: the first member follows the brace, not a comma
			added.Name.BeforeExtra = hujson.Extra(" ")
		}
		added.Name.AfterExtra = nil
		added.Value.BeforeExtra = whitespaceOnly(prev.Value.BeforeExtra)
		added.Value.AfterExtra = nil
		if lastAfter != nil {
			added.Value.AfterExtra = hujson.Extra{}
		}
		prev.Value.AfterExtra = lastAfter
		obj.AfterExtra = objAfter
		arr := added.Value.Value.(*hujson.Array)
		for i := 1; i < len(arr.Elements); i++ {
			arr.Elements[i].BeforeExtra = hujson.Extra(" ")
		}
	} else {
		arr := obj.Members[member(obj, "args")].Value.Value.(*hujson.Array)
		arr.AfterExtra = arrAfter
		arr.Elements[0].BeforeExtra = lead
		for i := 1; i < len(arr.Elements) && i <= len(prefix); i++ {
			arr.Elements[i].BeforeExtra = slices.Clone(sep)
		}
	}
	c.dirty = true
	return nil
}

// addPolicy puts --policy policy in front of the args of a guarded entry
// that runs the baseline (args ["--", ...]).
func (c *Config) addPolicy(s *Server, policy string) error {
	obj, err := c.entry(s.Pointer)
	if err != nil {
		return err
	}
	ai := member(obj, "args")
	if ai < 0 {
		return errors.New("no args")
	}
	arr, ok := obj.Members[ai].Value.Value.(*hujson.Array)
	if !ok || len(arr.Elements) == 0 {
		return errors.New("args is not a non-empty array")
	}
	lead, arrAfter := slices.Clone(arr.Elements[0].BeforeExtra), slices.Clone(arr.AfterExtra)
	sep := separator(lead)
	if len(arr.Elements) > 1 && len(bytes.TrimSpace(arr.Elements[1].BeforeExtra)) == 0 {
		sep = slices.Clone(arr.Elements[1].BeforeExtra)
	}
	if err := c.patch([]patchOp{
		{Op: "add", Path: s.Pointer + "/args/0", Value: quote(policy)},
		{Op: "add", Path: s.Pointer + "/args/0", Value: quote("--policy")},
	}); err != nil {
		return err
	}
	if obj, err = c.entry(s.Pointer); err != nil {
		return err
	}
	arr = obj.Members[member(obj, "args")].Value.Value.(*hujson.Array)
	arr.AfterExtra = arrAfter
	arr.Elements[0].BeforeExtra = lead
	arr.Elements[1].BeforeExtra = slices.Clone(sep)
	arr.Elements[2].BeforeExtra = slices.Clone(sep)
	c.dirty = true
	return nil
}

// unguard restores the entry at s.Pointer from the argv after "--".
func (c *Config) unguard(s *Server) error {
	if c.Shape == CommandArray {
		return c.unguardArray(s)
	}
	if c.Format == "toml" {
		return c.unguardTOML(s)
	}
	if c.Format == "yaml" {
		return c.unguardYAML(s)
	}
	obj, err := c.entry(s.Pointer)
	if err != nil {
		return err
	}
	ai := member(obj, "args")
	if ai < 0 {
		return errors.New(`no args, so no "--" and server command`)
	}
	arr, ok := obj.Members[ai].Value.Value.(*hujson.Array)
	if !ok {
		return errors.New("args is not an array")
	}
	dash := dashIndex(arr)
	if dash < 0 {
		return errors.New(`no "--" followed by the server's command in args`)
	}
	cmd, ok := arr.Elements[dash+1].Value.(hujson.Literal)
	if !ok || cmd.Kind() != '"' {
		return errors.New(`the word after "--" is not a string`)
	}
	lead := slices.Clone(arr.Elements[0].BeforeExtra)
	arrAfter := slices.Clone(arr.AfterExtra)
	objAfter := slices.Clone(obj.AfterExtra)
	trailing := obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	ops := []patchOp{{Op: "replace", Path: s.Pointer + "/" + s.cmdKey(), Value: slices.Clone(cmd)}}
	for range dash + 2 {
		ops = append(ops, patchOp{Op: "remove", Path: s.Pointer + "/args/0"})
	}
	if err := c.patch(ops); err != nil {
		return err
	}
	if obj, err = c.entry(s.Pointer); err != nil {
		return err
	}
	ai = member(obj, "args")
	arr = obj.Members[ai].Value.Value.(*hujson.Array)
	arr.AfterExtra = arrAfter
	switch {
	case len(arr.Elements) > 0:
		arr.Elements[0].BeforeExtra = lead
	case ai == len(obj.Members)-1 && ai > 0:
		// wrap adds args as the last member when an entry has none; an
		// empty args in that place goes, as it came.
		if err := c.patch([]patchOp{{Op: "remove", Path: s.Pointer + "/args"}}); err != nil {
			return err
		}
		if obj, err = c.entry(s.Pointer); err != nil {
			return err
		}
		obj.AfterExtra = objAfter
		last := &obj.Members[len(obj.Members)-1].Value
		if !trailing {
			last.AfterExtra = nil
		} else if last.AfterExtra == nil {
			last.AfterExtra = hujson.Extra{}
		}
	}
	c.dirty = true
	return nil
}

// commandArray returns the command array of the entry at ptr (opencode's
// shape) and its layout: the whitespace before its first element, the
// separator between elements, and what follows its last.
func (c *Config) commandArray(ptr string) (arr *hujson.Array, lead, sep, after hujson.Extra, err error) {
	obj, err := c.entry(ptr)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ci := member(obj, "command")
	if ci < 0 {
		return nil, nil, nil, nil, errors.New("no command")
	}
	arr, ok := obj.Members[ci].Value.Value.(*hujson.Array)
	if !ok || len(arr.Elements) == 0 {
		return nil, nil, nil, nil, errors.New("command is not a non-empty array")
	}
	lead = slices.Clone(arr.Elements[0].BeforeExtra)
	sep = separator(lead)
	if len(arr.Elements) > 1 && len(bytes.TrimSpace(arr.Elements[1].BeforeExtra)) == 0 {
		sep = slices.Clone(arr.Elements[1].BeforeExtra)
	}
	return arr, lead, sep, slices.Clone(arr.AfterExtra), nil
}

// guardArray is guard for opencode's shape: exe [--policy P] -- go in
// front of the command array, separated as its elements are.
func (c *Config) guardArray(s *Server, exe, policy, name string) error {
	_, lead, sep, after, err := c.commandArray(s.Pointer)
	if err != nil {
		return err
	}
	prefix := append(append([][]byte{quote(exe)}, ownWords(policy, name)...), quote("--"))
	var ops []patchOp
	for i := len(prefix) - 1; i >= 0; i-- {
		ops = append(ops, patchOp{Op: "add", Path: s.Pointer + "/command/0", Value: prefix[i]})
	}
	if err := c.patch(ops); err != nil {
		return err
	}
	arr, _, _, _, err := c.commandArray(s.Pointer)
	if err != nil {
		return err
	}
	arr.AfterExtra = after
	arr.Elements[0].BeforeExtra = lead
	for i := 1; i <= len(prefix); i++ {
		arr.Elements[i].BeforeExtra = slices.Clone(sep)
	}
	c.dirty = true
	return nil
}

// unguardArray is unguard for opencode's shape: everything up to the
// first "--" leaves the command array.
func (c *Config) unguardArray(s *Server) error {
	arr, lead, _, after, err := c.commandArray(s.Pointer)
	if err != nil {
		return err
	}
	dash := dashIndex(arr)
	if dash < 0 {
		return errors.New(`no "--" followed by the server's command in command`)
	}
	var ops []patchOp
	for range dash + 1 {
		ops = append(ops, patchOp{Op: "remove", Path: s.Pointer + "/command/0"})
	}
	if err := c.patch(ops); err != nil {
		return err
	}
	if arr, _, _, _, err = c.commandArray(s.Pointer); err != nil {
		return err
	}
	arr.AfterExtra = after
	arr.Elements[0].BeforeExtra = lead
	c.dirty = true
	return nil
}

// dashIndex is the index of the first "--" string of arr when a word
// follows it (the server's command), else -1.
func dashIndex(arr *hujson.Array) int {
	for i, e := range arr.Elements {
		if lit, ok := e.Value.(hujson.Literal); ok && lit.Kind() == '"' && lit.String() == "--" {
			if i+1 < len(arr.Elements) {
				return i
			}
			return -1
		}
	}
	return -1
}

// ownWords are mcpguard's words before "--" in a wrapped entry, as JSON
// strings: --policy P, or, for an entry guarded by the baseline,
// --server-name NAME (the entry's name, so that its rejections count
// apart from other entries run by the same launcher).
func ownWords(policy, name string) [][]byte {
	switch {
	case policy != "":
		return [][]byte{quote("--policy"), quote(policy)}
	case name != "":
		return [][]byte{quote("--server-name"), quote(name)}
	}
	return nil
}

// cmdKey is the member of the entry at s.Pointer that holds the program.
func (s *Server) cmdKey() string {
	if s.CmdKey != "" {
		return s.CmdKey
	}
	return "command"
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value []byte `json:"-"`
}

// patch applies ops with hujson; values are JSON texts, written as given.
func (c *Config) patch(ops []patchOp) error {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, op := range ops {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"op":%s,"path":%s`, quote(op.Op), quote(op.Path))
		if op.Value != nil {
			b.WriteString(`,"value":`)
			b.Write(op.Value)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return c.root.Patch(b.Bytes())
}

// entry returns the object at ptr.
func (c *Config) entry(ptr string) (*hujson.Object, error) {
	obj, ok := c.find(ptr).(*hujson.Object)
	if !ok {
		return nil, errors.New("the entry is not an object")
	}
	return obj, nil
}

// member returns the index of the first member called name, or -1.
func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// separator is the whitespace to put before each inserted argument: the
// line break and indentation of a multi-line array, else one space.
func separator(lead hujson.Extra) hujson.Extra {
	if i := bytes.LastIndexByte(lead, '\n'); i >= 0 && len(bytes.TrimSpace(lead[i:])) == 0 {
		return slices.Clone(lead[i:])
	}
	return hujson.Extra(" ")
}

// whitespaceOnly is b if it holds no comment, else its last line's
// indentation.
func whitespaceOnly(b hujson.Extra) hujson.Extra {
	if len(bytes.TrimSpace(b)) == 0 {
		return slices.Clone(b)
	}
	return separator(b)
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func array(elems [][]byte) []byte {
	return append(append([]byte("["), bytes.Join(elems, []byte(", "))...), ']')
}

// Bytes is the file as edited.
func (c *Config) Bytes() []byte {
	if !c.dirty {
		return c.src
	}
	if c.edited != nil {
		return c.edited
	}
	return c.root.Pack()
}
