package pins

import (
	"fmt"
	"slices"
	"strings"
)

// Change is one difference between a lock and what the server shows now.
// Every value it holds is canonical text, safe to print.
type Change struct {
	Kind  string // "instructions", "serverInfo", or an item's kind (tool, prompt, ...)
	Key   string // the item's name or URI; "" for instructions and serverInfo
	State string // Added, Removed or Modified
	// Old and New are the whole values shown: the instructions (JSON
	// strings), a new item or serverInfo (its canonical text).
	Old, New *string
	Fields   []FieldChange // what changed in a modified item or serverInfo
}

// FieldChange is one top-level member of an item that changed; Old or New
// is nil where the member is absent.
type FieldChange struct {
	Name     string
	Old, New *string
}

// Change states.
const (
	Added    = "new"
	Removed  = "removed"
	Modified = "changed"
)

// Changes are what Diff found, in a stable order: the instructions, the
// serverInfo, then each kind's items by key.
type Changes []Change

// Diff compares what the server shows now (cur) with a lock (old), field
// by field.
func Diff(old, cur *Lock) Changes {
	var cs Changes
	if old.HasInstructions != cur.HasInstructions || old.Instructions != cur.Instructions {
		c := Change{Kind: "instructions", State: Modified}
		if old.HasInstructions {
			c.Old = ptr(quote(old.Instructions))
		}
		if cur.HasInstructions {
			c.New = ptr(quote(cur.Instructions))
		}
		cs = append(cs, c)
	}
	switch {
	case old.ServerInfo == nil && cur.ServerInfo != nil:
		cs = append(cs, Change{Kind: "serverInfo", State: Added, New: ptr(cur.ServerInfo.Text())})
	case old.ServerInfo != nil && cur.ServerInfo == nil:
		cs = append(cs, Change{Kind: "serverInfo", State: Removed})
	case old.ServerInfo != nil && old.ServerInfo.Digest() != cur.ServerInfo.Digest():
		cs = append(cs, Change{Kind: "serverInfo", State: Modified, Fields: fieldChanges(*old.ServerInfo, *cur.ServerInfo)})
	}
	for k := range numKinds {
		var keys []string
		for key := range old.Items[k] {
			keys = append(keys, key)
		}
		for key := range cur.Items[k] {
			if _, inOld := old.Items[k][key]; !inOld {
				keys = append(keys, key)
			}
		}
		slices.Sort(keys)
		for _, key := range keys {
			o, inOld := old.Items[k][key]
			c, inCur := cur.Items[k][key]
			switch {
			case !inOld:
				cs = append(cs, Change{Kind: k.String(), Key: key, State: Added, New: ptr(c.Text())})
			case !inCur:
				cs = append(cs, Change{Kind: k.String(), Key: key, State: Removed})
			case o.Digest() != c.Digest():
				cs = append(cs, Change{Kind: k.String(), Key: key, State: Modified, Fields: fieldChanges(o, c)})
			}
		}
	}
	return cs
}

func fieldChanges(old, cur Definition) []FieldChange {
	var fs []FieldChange
	for _, name := range ChangedFields(old, cur) {
		f := FieldChange{Name: name}
		if v, ok := old.Fields[name]; ok {
			f.Old = ptr(v)
		}
		if v, ok := cur.Fields[name]; ok {
			f.New = ptr(v)
		}
		fs = append(fs, f)
	}
	return fs
}

func ptr(s string) *string { return &s }

// String is the diff as `mcpguard pin --diff` prints it: a line per
// change, then the values and fields, - for the lock's, + for the
// server's.
func (cs Changes) String() string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.Kind)
		if c.Key != "" {
			b.WriteString(" " + quote(c.Key))
		}
		b.WriteString(": " + c.State)
		if c.State == Added && c.Key != "" {
			b.WriteString(" (not in the lock)")
		}
		b.WriteByte('\n')
		if c.Old != nil {
			fmt.Fprintf(&b, "  - %s\n", *c.Old)
		}
		if c.New != nil {
			fmt.Fprintf(&b, "  + %s\n", *c.New)
		}
		for _, f := range c.Fields {
			fmt.Fprintf(&b, "  %s:\n", quote(f.Name))
			if f.Old != nil {
				fmt.Fprintf(&b, "    - %s\n", *f.Old)
			}
			if f.New != nil {
				fmt.Fprintf(&b, "    + %s\n", *f.New)
			}
		}
	}
	return b.String()
}

// Summary counts what the lock pins: "3 tools, 1 prompt, 0 resources,
// 0 resource templates", and "the instructions" when it pins some.
func (l *Lock) Summary() string {
	var parts []string
	for k := range numKinds {
		n, words := len(l.Items[k]), k.Section()
		if k == ResourceTemplate {
			words = "resource templates"
		}
		if n == 1 {
			words = strings.TrimSuffix(words, "s")
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, words))
	}
	if l.HasInstructions {
		parts = append(parts, "the instructions")
	}
	return strings.Join(parts, ", ")
}
