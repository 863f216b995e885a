// LEAD'S TEMPORARY STUB so that the policy engine builds before the real package lands.
// Whoever writes the real package rules: DELETE THIS FILE (git rm rules/zz_lead_stub.go) in your first commit.

package rules

import (
	"regexp"
	"strings"
	"time"
)

type Finding struct{ Code, Reason, Remediation string }
type Check interface{ Check(value string) *Finding }

const (
	CodeDangerousFlag = "INPUT_REJECTED_DANGEROUS_FLAG"
	CodeShellMetachar = "INPUT_REJECTED_SHELL_METACHAR"
	CodeControlChars  = "INPUT_REJECTED_CONTROL_CHARS"
	CodePattern       = "INPUT_REJECTED_PATTERN"
	CodeTimeout       = "INPUT_REJECTED_INVALID_TIMEOUT"
	CodePathScope     = "INPUT_REJECTED_PATH_SCOPE"
)

type fn func(string) *Finding

func (f fn) Check(s string) *Finding { return f(s) }

type DangerousFlags = fn
type Pattern = fn
type DenyPattern = fn
type PathScope = fn

func NewDangerousFlags(long, short []string) (fn, error) {
	return func(s string) *Finding {
		for _, l := range long {
			if strings.HasPrefix(strings.ToLower(s), l) {
				return &Finding{Code: CodeDangerousFlag, Reason: "flag " + l}
			}
		}
		return nil
	}, nil
}
func NewShellMetachars() fn {
	return func(s string) *Finding {
		if strings.ContainsAny(s, "`$;|&<>\n\r") {
			return &Finding{Code: CodeShellMetachar, Reason: "meta"}
		}
		return nil
	}
}
func NewControlChars() fn {
	return func(s string) *Finding {
		for _, r := range s {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) {
				return &Finding{Code: CodeControlChars, Reason: "ctl"}
			}
		}
		return nil
	}
}
func NewPattern(e, code, rem string) (fn, error) {
	re, err := regexp.Compile(e)
	if code == "" {
		code = CodePattern
	}
	return func(s string) *Finding {
		if !re.MatchString(s) {
			return &Finding{Code: code, Reason: "pattern"}
		}
		return nil
	}, err
}
func NewDenyPattern(e, code, rem string) (fn, error) {
	re, err := regexp.Compile(e)
	if code == "" {
		code = CodePattern
	}
	return func(s string) *Finding {
		if re.MatchString(s) {
			return &Finding{Code: code, Reason: "deny"}
		}
		return nil
	}, err
}
func NewDuration() fn {
	return func(s string) *Finding {
		if _, err := time.ParseDuration(s); err != nil {
			return &Finding{Code: CodeTimeout}
		}
		return nil
	}
}
func NewPathScope(roots []string) (fn, error) {
	return func(s string) *Finding {
		if strings.Contains(s, "..") || (strings.HasPrefix(s, "/") && !strings.HasPrefix(s, roots[0])) {
			return &Finding{Code: CodePathScope}
		}
		return nil
	}, nil
}
