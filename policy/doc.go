// Package policy owns the compiled policy and every decision mcpguard
// makes: loading and validating a YAML policy file, and judging each
// message that crosses the proxy.
//
// Where things happen:
//
//   - Load / LoadFile read a policy (load.go), validate it against the
//     policy-file schema (policy.schema.json, which editors can use too)
//     and compile its tools, ingress and egress rules (compile.go); an
//     ingress rule's check is looked up in the check registry (checks.go,
//     which also says how to add one); a policy that does not load never
//     starts a server.
//   - A Session is one MCP connection's state (session.go). A tools/call,
//     or any request a rule names, is judged by Session.Ingress
//     (ingress.go): tools entries, JSON Schemas, then every ingress rule
//     whose tools and fields match, each a check from package rules.
//   - Everything the server sends is rewritten by Session.Egress
//     (egress.go): the tool's egress rules by selector, then the `text`
//     canonicaliser (package rules/canon) on every string.
//   - A rejection is a typed value (its stable code, field path and rule)
//     turned into the agent's reply in one place (package policy/message).
//
// It must never let a message through that it did not judge, never echo a
// caller's value in a rejection, and never panic on input.
//
// # Why the hot path looks the way it does
//
//   - Checks read an argument tree (argtree.go), not map[string]any: the
//     arguments, already validated strictly, are read once into a flat list
//     of nodes in document order, strings cut from one copy of the text and
//     unescaped only when they hold escapes. FuzzArgTree holds the tree to
//     json.Unmarshal on every valid JSON text. Which field a rejection names
//     does not depend on member order: a failing selector is walked again
//     in member-name order.
//   - JSON Schema validation has a fast path for "valid" (fastschema.go):
//     kaptinlin formats every value it evaluates with fmt, so a schema whose
//     every keyword is in a common subset also gets a small compiled
//     acceptor that can only answer "valid"; everything else, and every
//     rejection with its validation_errors, comes from kaptinlin.
//     TestFastSchemaAgrees and FuzzFastSchema hold it to kaptinlin.
//   - The tools: decision and the applicable ingress rules are planned once
//     per tool name the policy writes, so a call matches no glob at run
//     time.
package policy
