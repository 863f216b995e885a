// Package policies holds the shipped policies, *.yaml in this directory,
// for `mcpguard wrap --policy-dir` to copy next to the servers they were
// written for. README.md here is the policy reference.
package policies

import "embed"

// FS holds every shipped policy, by file name (filesystem.yaml, ...).
//
//go:embed *.yaml
var FS embed.FS
