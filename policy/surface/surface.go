// Package surface is the table of every member of every MCP message that
// carries text, a URL or a definition, in each direction, for every
// protocol revision mcpguard relays (2024-11-05 to 2026-07-28), and what
// mcpguard does with it: judged by an ingress check, cleaned by the egress
// canonicalisers, pinned as part of a definition, or exempt for a stated
// reason.
//
// It stops the unread channel: a member a new revision adds (inputRequests
// in results, icons, resource links) that reaches the other side with no
// check because nobody looked. TestEverySurfaceClassified walks the
// official schema of each revision (testdata/schema) and fails on a member
// this table does not classify, and on an entry no schema has.
package surface

import "strings"

// Treatment is what mcpguard does with a member.
type Treatment string

const (
	// Judged: a check decides whether the message may pass (ingress
	// rules, the secrets check, tools:, pins, server_requests:, the url
	// check); a failure refuses the message or removes the member.
	Judged Treatment = "judged"
	// Cleaned: every string goes through the egress canonicalisers
	// (egress rules, text, secrets redaction, image removal) before the
	// client reads it.
	Cleaned Treatment = "cleaned"
	// Pinned: part of a definition the server shows the model; a change
	// is withheld (tools, prompts, resources, templates) or replaced
	// (instructions) and logged. Pinned strings are cleaned too.
	Pinned Treatment = "pinned"
	// Exempt: relayed as it is (after strict parsing); Why says why that
	// is safe.
	Exempt Treatment = "exempt"
)

// Direction is who sends the member.
type Direction string

const (
	ToServer Direction = "to_server" // client requests, notifications and answers
	ToClient Direction = "to_client" // server results, notifications and requests
)

// Entry classifies one member, or every member of a definition (Member
// without a dot), in one direction. Member is the schema definition and
// the member path below it: "CallToolRequestParams.arguments". An entry
// covers the member and everything below it.
type Entry struct {
	Dir       Direction
	Member    string
	Treatment Treatment
	Why       string // how (the check, the canonicaliser) or, for exempt, why that is safe
}

// Lookup returns the entry that classifies member (Def.a.b) in dir: the
// one with the longest Member that is member or a prefix of it at a dot.
func Lookup(dir Direction, member string) (Entry, bool) {
	var best Entry
	found := false
	for _, e := range Table {
		if e.Dir != dir || !(member == e.Member || strings.HasPrefix(member, e.Member+".")) {
			continue
		}
		if !found || len(e.Member) > len(best.Member) {
			best, found = e, true
		}
	}
	return best, found
}

// Markdown renders the table for the policy reference: one row an entry,
// in table order.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| direction | member | treatment | how, or why it is safe |\n|---|---|---|---|\n")
	for _, e := range Table {
		dir := "client → server"
		if e.Dir == ToClient {
			dir = "server → client"
		}
		member := e.Member
		if !strings.Contains(member, ".") {
			member += " (every member)"
		}
		b.WriteString("| " + dir + " | `" + e.Member + "`" + strings.TrimPrefix(member, e.Member) + " | " + string(e.Treatment) + " | " + strings.ReplaceAll(e.Why, "|", "\\|") + " |\n")
	}
	return b.String()
}
