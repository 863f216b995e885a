package policy

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Explaining schema failures in the policy's own language. The validator
// speaks JSON Schema ("No values are allowed because the schema is set to
// 'false'", one failure per branch of every oneOf and if/then); a person
// writing a policy needs "unknown key `unknown_tool`; did you mean
// `unknown_tools`?", the allowed values of a setting, and locations
// written as rejections write them (ingress[1].check).

// policyKeys is what policy.schema.json allows where, read from the schema
// itself so that a check added there is known here too.
type policyKeys struct {
	top, tool, egress []string
	ruleBase          []string            // keys every ingress rule may have
	ruleByCheck       map[string][]string // the keys a check adds
	checks            []string
}

// schemaKeys reads the keys on the first policy file that fails
// validation: a valid policy, and the baseline, never need them.
var schemaKeys = sync.OnceValue(func() policyKeys {
	var s struct {
		Properties map[string]jsontext.Value `json:"properties"`
		Defs       struct {
			Tool struct {
				OneOf []struct {
					Properties map[string]jsontext.Value `json:"properties"`
				} `json:"oneOf"`
			} `json:"tool"`
			IngressRule struct {
				Properties map[string]jsontext.Value `json:"properties"`
				AllOf      []struct {
					If struct {
						Properties struct {
							Check struct {
								Const string   `json:"const"`
								Enum  []string `json:"enum"`
							} `json:"check"`
						} `json:"properties"`
					} `json:"if"`
					Then struct {
						Properties map[string]jsontext.Value `json:"properties"`
					} `json:"then"`
				} `json:"allOf"`
			} `json:"ingressRule"`
			EgressRule struct {
				Properties map[string]jsontext.Value `json:"properties"`
			} `json:"egressRule"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(SchemaJSON, &s); err != nil {
		panic("policy.schema.json: " + err.Error())
	}
	names := func(m map[string]jsontext.Value) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	k := policyKeys{top: names(s.Properties), egress: names(s.Defs.EgressRule.Properties),
		ruleBase: names(s.Defs.IngressRule.Properties), ruleByCheck: map[string][]string{}}
	for _, alt := range s.Defs.Tool.OneOf {
		if alt.Properties != nil {
			k.tool = names(alt.Properties)
		}
	}
	for _, branch := range s.Defs.IngressRule.AllOf {
		checks := branch.If.Properties.Check.Enum
		if c := branch.If.Properties.Check.Const; c != "" {
			checks = []string{c}
		}
		for _, c := range checks {
			for _, key := range names(branch.Then.Properties) {
				if !contains(k.ruleBase, key) {
					k.ruleByCheck[c] = append(k.ruleByCheck[c], key)
				}
			}
			if _, ok := k.ruleByCheck[c]; !ok {
				k.ruleByCheck[c] = nil
			}
		}
	}
	for c := range k.ruleByCheck {
		k.checks = append(k.checks, c)
	}
	sort.Strings(k.checks)
	return k
})

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// explained is one failure as the policy's author should read it.
type explained struct {
	pointer string
	message string
}

// explainFailures turns the validator's failures on doc into messages in
// the policy's language, one per problem: the failures a problem causes
// in other branches of the schema (a rule without a valid check fails
// every check's branch) are left out.
func explainFailures(doc []byte, fails []schemaFailure) []explained {
	keys := schemaKeys()
	var root any
	_ = json.Unmarshal(doc, &root)
	var out []explained
	add := func(pointer, msg string) {
		out = append(out, explained{pointer, msg})
	}
	// Rules whose check is missing or unknown: only that and their unknown
	// keys are worth saying.
	badCheck := map[string]bool{}
	missing := map[string][]string{} // rule pointer → required keys missing
	for _, f := range fails {
		segs := splitPointer(f.InstancePath)
		v, _ := lookupPointer(root, segs)
		switch {
		case len(segs) == 2 && segs[0] == "ingress":
			rule, _ := v.(map[string]any)
			check, _ := rule["check"].(string)
			if !contains(keys.checks, check) && !badCheck[f.InstancePath] {
				badCheck[f.InstancePath] = true
				if _, has := rule["check"]; !has {
					add(f.InstancePath, where(root, segs)+": missing key `check`; one of "+strings.Join(keys.checks, ", "))
				} else {
					add(f.InstancePath+"/check", where(root, append(segs, "check"))+": "+notAllowed(check, "check", keys.checks))
				}
			}
			if f.Keyword == "required" && !badCheck[f.InstancePath] {
				missing[f.InstancePath] = append(missing[f.InstancePath], quotedName(f.Message))
			}
		}
	}
	for ptr, keysMissing := range missing {
		segs := splitPointer(ptr)
		rule, _ := lookupPointer(root, segs)
		check, _ := rule.(map[string]any)["check"].(string)
		if len(keysMissing) > 1 && check == "dangerous_flags" {
			add(ptr, where(root, segs)+": check dangerous_flags needs `long` or `short_prefixes`")
			continue
		}
		for _, k := range keysMissing {
			add(ptr, where(root, segs)+": missing key `"+k+"` (check "+check+" needs it)")
		}
	}
	for _, f := range fails {
		segs := splitPointer(f.InstancePath)
		if len(segs) >= 2 && segs[0] == "ingress" && badCheck["/ingress/"+segs[1]] && f.Code != "false_schema_mismatch" {
			continue
		}
		if len(segs) == 2 && segs[0] == "ingress" && (badCheck[f.InstancePath] || f.Keyword == "required") {
			continue // said above
		}
		v, present := lookupPointer(root, segs)
		loc := where(root, segs)
		if !present && len(segs) == 3 && segs[0] == "ingress" {
			// The validator reports a required key of a check's branch
			// as a null value of the wrong type.
			rule, _ := lookupPointer(root, segs[:2])
			check, _ := rule.(map[string]any)["check"].(string)
			add(f.InstancePath, where(root, segs[:2])+": missing key `"+segs[2]+"` (check "+check+" needs it)")
			continue
		}
		last := ""
		if len(segs) > 0 {
			last = segs[len(segs)-1]
		}
		switch {
		case f.Code == "false_schema_mismatch" && len(segs) > 0:
			msg := unknownKey(root, segs)
			if len(segs) > 1 {
				msg = where(root, segs[:len(segs)-1]) + ": " + msg
			}
			add(f.InstancePath, msg)
		case len(segs) == 2 && segs[0] == "tools":
			if s, ok := v.(string); ok {
				add(f.InstancePath, loc+": "+notAllowed(s, "tool setting", []string{"allow", "deny"})+
					", or a mapping of "+strings.Join(keys.tool, ", "))
			}
			// A mapping: its own members' failures say what is wrong.
		case f.Keyword == "const" && last == "version":
			add(f.InstancePath, "version: must be 1")
		case f.Keyword == "enum":
			s, ok := v.(string)
			allowed := enumValues(f.Message)
			if !ok {
				add(f.InstancePath, loc+": must be one of "+strings.Join(allowed, ", "))
				break
			}
			what := last
			if _, err := strconv.Atoi(last); err == nil && len(segs) > 1 {
				what = strings.TrimSuffix(segs[len(segs)-2], "s") // methods[0]: a method
			}
			add(f.InstancePath, loc+": "+notAllowed(s, what, allowed))
		default:
			msg := f.Message
			if loc != "" {
				msg = loc + ": " + msg
			}
			add(f.InstancePath, msg)
		}
	}
	return out
}

// unknownKey explains a member that the schema does not allow where it is.
func unknownKey(root any, segs []string) string {
	keys := schemaKeys()
	key := segs[len(segs)-1]
	parent := segs[:len(segs)-1]
	var allowed []string
	switch {
	case len(parent) == 0:
		allowed = keys.top
	case len(parent) == 2 && parent[0] == "tools":
		allowed = keys.tool
	case len(parent) == 2 && parent[0] == "egress":
		allowed = keys.egress
	case len(parent) == 2 && parent[0] == "ingress":
		rule, _ := lookupPointer(root, parent)
		check, _ := rule.(map[string]any)["check"].(string)
		if own, ok := keys.ruleByCheck[check]; ok {
			for _, c := range keys.checks {
				if c != check && contains(keys.ruleByCheck[c], key) && !contains(own, key) {
					return "`" + key + "` does not apply to check " + check + " (it is a key of " + c + ")"
				}
			}
			allowed = append(append([]string{}, keys.ruleBase...), own...)
		} else {
			allowed = append([]string{}, keys.ruleBase...)
			for _, c := range keys.checks {
				allowed = append(allowed, keys.ruleByCheck[c]...)
			}
		}
	}
	msg := "unknown key `" + key + "`"
	if s := suggest(key, allowed); s != "" {
		return msg + "; did you mean `" + s + "`?"
	}
	if len(allowed) > 0 {
		sort.Strings(allowed)
		return msg + "; allowed here: " + strings.Join(dedupe(allowed), ", ")
	}
	return msg
}

// notAllowed says that value is not one of allowed for what.
func notAllowed(value, what string, allowed []string) string {
	msg := "`" + value + "` is not a valid " + what + "; allowed: " + strings.Join(allowed, ", ")
	if s := suggest(value, allowed); s != "" {
		msg += " (did you mean `" + s + "`?)"
	}
	return msg
}

// enumValues reads the allowed values back from the validator's message
// ("... should be one of the allowed values: a, b").
func enumValues(msg string) []string {
	i := strings.LastIndex(msg, ": ")
	if i < 0 {
		return nil
	}
	return strings.Split(msg[i+2:], ", ")
}

// quotedName is the name in single quotes in a validator message
// ("Required property 'long' is missing").
func quotedName(msg string) string {
	i := strings.IndexByte(msg, '\'')
	j := strings.LastIndexByte(msg, '\'')
	if i < 0 || j <= i {
		return msg
	}
	return msg[i+1 : j]
}

// suggest returns the candidate closest to s, if it is close enough to be
// a typo of it.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), c)
		if d < bestD && d*3 <= len(c) {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func splitPointer(p string) []string {
	if p == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range segs {
		segs[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
	}
	return segs
}

func lookupPointer(v any, segs []string) (any, bool) {
	for _, s := range segs {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[s]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// where writes a location as rejections do: ingress[1].fields[0],
// tools.read_file.
func where(root any, segs []string) string {
	var b strings.Builder
	v := root
	for _, s := range segs {
		if arr, ok := v.([]any); ok {
			b.WriteString("[" + s + "]")
			i, _ := strconv.Atoi(s)
			if i >= 0 && i < len(arr) {
				v = arr[i]
			} else {
				v = nil
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
		if m, ok := v.(map[string]any); ok {
			v = m[s]
		} else {
			v = nil
		}
	}
	return b.String()
}
