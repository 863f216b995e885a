package pins

import (
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/lint"
)

// Lint is an item of a snapshot whose text lint reports: hidden or
// suspicious content the model would read.
type Lint struct {
	Kind     string // "instructions", or the item's kind (tool, prompt, ...)
	Key      string // the item's name or URI; "" for the instructions
	Findings []lint.Finding
}

// String is the finding as `mcpguard pin` reports it: the item, quoted
// (canonical JSON text, safe to print), and its findings.
func (l Lint) String() string {
	what := l.Kind
	if l.Key != "" {
		what += " " + quote(l.Key)
	}
	return "lint: " + what + ": " + lint.Join(l.Findings)
}

// Snapshot builds the lock of what a server showed: initialize holds its
// initialize (and server/discover) results, pages each list method's
// result pages ("tools/list": [...]), as the raw bytes it sent. The first
// item of a name counts, as in the relay. It also lints what the server
// sent, before canonicalisation removes the hidden text lint reports.
func Snapshot(initialize []jsontext.Value, pages map[string][]jsontext.Value) (*Lock, []Lint, error) {
	l := NewLock()
	var lints []Lint
	for _, res := range initialize {
		var r struct {
			Instructions jsontext.Value `json:"instructions"`
			ServerInfo   jsontext.Value `json:"serverInfo"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, nil, fmt.Errorf("initialize result: %w", err)
		}
		if r.Instructions.Kind() == '"' {
			var text string
			if err := json.Unmarshal(r.Instructions, &text); err != nil {
				return nil, nil, fmt.Errorf("initialize result: instructions: %w", err)
			}
			l.Instructions, l.HasInstructions = canon.Text(text), true
			if fs := lint.Instructions(text); len(fs) > 0 {
				lints = append(lints, Lint{Kind: "instructions", Findings: fs})
			}
		}
		if r.ServerInfo != nil {
			d, err := Canonical(r.ServerInfo)
			if err != nil {
				return nil, nil, fmt.Errorf("serverInfo: %w", err)
			}
			l.ServerInfo = &d
		}
	}
	for k := range numKinds {
		for _, res := range pages[k.ListMethod()] {
			var r map[string]jsontext.Value
			if err := json.Unmarshal(res, &r); err != nil {
				return nil, nil, fmt.Errorf("%s result: %w", k.ListMethod(), err)
			}
			var items []jsontext.Value
			if r[k.Section()].Kind() == '[' {
				if err := json.Unmarshal(r[k.Section()], &items); err != nil {
					return nil, nil, fmt.Errorf("%s result: %w", k.ListMethod(), err)
				}
			}
			for _, item := range items {
				d, err := Canonical(item)
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", k.ListMethod(), err)
				}
				key := d.String(k.KeyField())
				if key == "" {
					return nil, nil, fmt.Errorf("%s: a %s without a %s", k.ListMethod(), k, k.KeyField())
				}
				if _, dup := l.Items[k][key]; dup {
					continue // the relay keeps the first too
				}
				l.Items[k][key] = d
				if fs := lint.Item(item); len(fs) > 0 {
					lints = append(lints, Lint{Kind: k.String(), Key: key, Findings: fs})
				}
			}
		}
	}
	return l, lints, nil
}

// quote is s as a JSON string, invalid UTF-8 replaced: safe to print
// once s is canonical.
func quote(s string) string {
	q, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		q, _ = jsontext.AppendQuote(nil, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return string(q)
}
