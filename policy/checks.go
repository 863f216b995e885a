package policy

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpguard/mcpguard/rules"
	"github.com/mcpguard/mcpguard/rules/codes"
	"github.com/mcpguard/mcpguard/rules/ratelimit"
	"github.com/mcpguard/mcpguard/rules/shellcmd"
	"github.com/mcpguard/mcpguard/rules/urlcheck"
)

// checkKinds is the registry of ingress checks: every name a policy may
// write in an ingress rule's check:, with the error code its findings
// carry, the type its options decode into and its constructor. Compiling
// a policy looks the name up here; nothing else in the package lists the
// checks.
//
// Adding a check (its type lives in package rules or a child of it):
//
//  1. an entry here: kind(name, code, constructor), with a struct of the
//     check's own option members (json names as the policy writes them);
//  2. its code in package codes (rules/codes), if it is a new one;
//  3. a branch in policy.schema.json: the name in the check enum and an
//     if/then naming exactly the common members and its options;
//  4. a row in README.md's table of codes and a section in
//     policies/README.md headed "### `name` — CODE";
//  5. a case file in testdata/cases whose policy uses it, with a case it
//     refuses with its code.
//
// TestCheckRegistry fails until 2 to 5 agree with this table.
var checkKinds = []checkKind{
	kind("dangerous_flags", codes.DangerousFlag, func(o *dangerousFlagsV1, _ *checkBuild) (rules.Check, error) {
		flags, err := rules.NewDangerousFlags(o.Long, o.ShortPrefixes)
		if err != nil {
			return nil, err
		}
		if o.Abbreviations != nil && !*o.Abbreviations {
			flags.WithoutAbbreviations()
		}
		return flags, flags.WithValueShorts(o.ValueShorts)
	}),
	kind("shell_metachars", codes.ShellMetachar, func(*noOptions, *checkBuild) (rules.Check, error) {
		return rules.NewShellMetachars(), nil
	}),
	kind("shell_command", codes.ShellCommand, func(o *shellCommandV1, _ *checkBuild) (rules.Check, error) {
		var syntax []shellcmd.Syntax
		if o.Syntax != nil {
			syntax = make([]shellcmd.Syntax, len(o.Syntax))
			for i, s := range o.Syntax {
				syntax[i] = shellcmd.Syntax(s)
			}
		}
		return shellcmd.New(shellcmd.Options{
			Programs: o.Programs, DenyPrograms: o.DenyPrograms, Syntax: syntax, Env: o.Env,
		})
	}),
	kind("control_chars", codes.ControlChars, func(*noOptions, *checkBuild) (rules.Check, error) {
		return rules.NewControlChars(), nil
	}),
	kind("pattern", codes.Pattern, func(o *patternV1, b *checkBuild) (rules.Check, error) {
		b.ownCode(o.Code)
		return rules.NewPattern(o.Pattern, o.Code, b.remediation)
	}),
	kind("deny_pattern", codes.Pattern, func(o *patternV1, b *checkBuild) (rules.Check, error) {
		b.ownCode(o.Code)
		return rules.NewDenyPattern(o.Pattern, o.Code, b.remediation)
	}),
	kind("duration", codes.InvalidTimeout, func(o *durationV1, _ *checkBuild) (rules.Check, error) {
		var max time.Duration
		if o.Max != "" {
			var err error
			if max, err = time.ParseDuration(o.Max); err != nil {
				return nil, err
			}
			if max <= 0 {
				return nil, fmt.Errorf("max %q: want a positive duration", o.Max)
			}
		}
		return rules.NewDuration(max, o.AllowZero), nil
	}),
	kind("url", codes.URL, func(o *urlV1, _ *checkBuild) (rules.Check, error) {
		return urlcheck.New(urlcheck.Options{
			Schemes: o.Schemes, AllowHosts: o.AllowHosts, DenyHosts: o.DenyHosts, DenyPrivate: o.DenyPrivate,
		})
	}),
	kind("path_scope", codes.PathScope, func(o *pathScopeV1, b *checkBuild) (rules.Check, error) {
		roots := make([]string, len(o.Roots))
		for i, root := range o.Roots {
			var err error
			if roots[i], err = expandVars(root, b.lookup); err != nil {
				return nil, fmt.Errorf("roots[%d]: %v", i, err)
			}
		}
		b.roots, b.clientRoots = roots, o.ClientRoots
		if o.ClientRoots && len(roots) == 0 {
			return noRootsYet{}, nil
		}
		return rules.NewPathScope(roots)
	}),
	// A rate limit judges no value: it counts calls, per value of its
	// fields when it has any, in the session (checkLimits).
	kind("rate_limit", codes.RateLimited, func(o *rateLimitV1, b *checkBuild) (rules.Check, error) {
		per, err := time.ParseDuration(o.Per)
		if err != nil {
			return nil, fmt.Errorf("per: %v", err)
		}
		l, err := ratelimit.NewLimit(o.Calls, per, o.MaxKeys)
		if err != nil {
			return nil, err
		}
		b.limit = &l
		return nil, nil
	}),
	// The scanner needs the known secrets of the environment; it is bound
	// when they are learnt (learnSecrets).
	kind("secrets", codes.Secret, func(*noOptions, *checkBuild) (rules.Check, error) {
		return nil, nil
	}),
}

// The option members of each check, as a policy writes them beside the
// common members of ingressV1.
type (
	noOptions struct{}

	dangerousFlagsV1 struct {
		Long          []string `json:"long"`
		ShortPrefixes []string `json:"short_prefixes"`
		Abbreviations *bool    `json:"abbreviations"`
		ValueShorts   []string `json:"short_with_value"`
	}
	shellCommandV1 struct {
		Programs     []string `json:"programs"`
		DenyPrograms []string `json:"deny_programs"`
		Syntax       []string `json:"syntax"`
		Env          []string `json:"env"`
	}
	patternV1 struct {
		Pattern string `json:"pattern"`
		Code    string `json:"code"`
	}
	durationV1 struct {
		Max       string `json:"max"`
		AllowZero bool   `json:"allow_zero"`
	}
	urlV1 struct {
		Schemes     []string `json:"schemes"`
		AllowHosts  []string `json:"allow_hosts"`
		DenyHosts   []string `json:"deny_hosts"`
		DenyPrivate bool     `json:"deny_private"`
	}
	pathScopeV1 struct {
		Roots       []string `json:"roots"`
		ClientRoots bool     `json:"client_roots"`
	}
	rateLimitV1 struct {
		Calls   int    `json:"calls"`
		Per     string `json:"per"`
		MaxKeys int    `json:"max_keys"`
	}
)

// A checkKind is one entry of the registry.
type checkKind struct {
	name    string
	code    string       // the error_code of its findings (codes.*)
	options reflect.Type // the struct its option members decode into
	// build decodes the check's options from one ingress rule as written
	// (all but its common members, strictly) and constructs the check.
	build func(raw jsontext.Value, b *checkBuild) (rules.Check, error)
}

// checkBuild is a rule as its check's constructor sees it: what it may read
// (the environment, the rule's remediation) and what it may set besides
// the check (the rule's own code, path_scope's roots).
type checkBuild struct {
	lookup      func(string) (string, bool) // the environment, for ${VAR}
	remediation string                      // the rule's remediation:, "" when none
	code        string                      // the kind's code unless the rule names its own
	roots       []string                    // path_scope: the roots as expanded
	clientRoots bool                        // path_scope: the client's directories are roots too
	limit       *ratelimit.Limit            // rate_limit: the limit, which no value check enforces
}

// ownCode makes the rule's code: its error code, when it names one.
func (b *checkBuild) ownCode(code string) {
	if code != "" {
		b.code = code
	}
}

// kind registers a check whose options decode into O.
func kind[O any](name, code string, construct func(*O, *checkBuild) (rules.Check, error)) checkKind {
	return checkKind{name: name, code: code, options: reflect.TypeFor[O](),
		build: func(raw jsontext.Value, b *checkBuild) (rules.Check, error) {
			var members map[string]jsontext.Value
			if err := unmarshalStrict(raw, &members); err != nil {
				return nil, err
			}
			for _, name := range commonMembers {
				delete(members, name)
			}
			own, err := json.Marshal(members)
			if err != nil {
				return nil, err
			}
			var o O
			if err := unmarshalStrict(own, &o); err != nil {
				return nil, err
			}
			return construct(&o, b)
		}}
}

// commonMembers are the json names of ingressV1: what every rule has,
// whatever its check.
var commonMembers = jsonNames(reflect.TypeFor[ingressV1]())

// jsonNames returns the json names of a struct's fields.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// lookupCheck returns the registered check of that name.
func lookupCheck(name string) (checkKind, bool) {
	for _, k := range checkKinds {
		if k.name == name {
			return k, true
		}
	}
	return checkKind{}, false
}
