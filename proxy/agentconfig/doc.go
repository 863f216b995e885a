// Package agentconfig edits the MCP server entries of agents' configs:
// it writes the proxy's launch line in front of every stdio server and
// takes it out again (`mcpguard wrap`, `mcpguard unwrap`), and reads
// every entry for `mcpguard status`. An unguarded server in some agent's
// config is a shadow server (OWASP MCP09): status lists every one.
//
// It sits in the proxy layer because what it writes is how the proxy is
// launched; it places policies through the policy layer and runs no relay
// (status is handed the log's rejection counts by the caller).
//
// # Configs
//
// Agents is the table of every agent: its name (as --client takes it),
// its user files (macOS and Linux paths; mcpguard does not run on
// Windows) and project files, their format, the member that holds the
// servers, the entry's shape and how its remote entries look. Files are
// read where they exist: user files first, then those of each project
// (the working directory or --project DIRs; with --all-projects, and
// always for status, also every directory ~/.claude.json names, whose
// committed files wrap does not touch unasked).
//
// JSON agents (comments and trailing commas kept): Claude Desktop, Claude
// Code (~/.claude.json with projects.DIR.mcpServers, and .mcp.json),
// Cursor, VS Code (key servers; profiles too), Windsurf, Gemini CLI (and
// its extensions' gemini-extension.json), Cline, Zed (context_servers;
// its older {"command": {"path", "args"}} shape is edited inside),
// opencode (key mcp, "type": "local" and command an array holding the
// program and its arguments: wrap puts mcpguard's words at its front),
// LM Studio, JetBrains Junie, Amazon Q, Kiro, GitHub Copilot CLI
// ("type": "local" is stdio), Crush (key mcp) and Antigravity. Codex's
// TOML is edited in place: go-toml's parser (github.com/pelletier/go-toml/v2/unstable)
// gives the byte range of each [mcp_servers.NAME] table's command and
// args, and only those bytes change (codex.go). Continue (mcpServers, a
// list of {name, command, args}) and Goose (extensions, a map of {cmd,
// args}) are YAML, edited the same way: go-yaml's parser
// (github.com/goccy/go-yaml) gives each command's and args element's line
// and column, only those bytes change, and the edited file is read back
// to check the entry runs what it should (yaml.go). Entries in flow style
// or with a multi-line command are listed and left for the user.
// Continue also reads the JSON files of its mcpServers folders, as JSON
// configs with mcpServers (and Claude Code's projects), or as one entry
// alone named after the file (Agent.EntryFiles).
//
// HOME, XDG_CONFIG_HOME, CODEX_HOME and CLAUDE_CONFIG_DIR say where to look (the hidden flag
// --home replaces HOME, for tests).
//
// # Entries
//
// An entry with a command (and no url, serverUrl or httpUrl, and a type
// that is absent or "stdio") is a stdio server. wrap rewrites it to
//
//	"command": "/abs/path/of/mcpguard",
//	"args": ["--policy", "/abs/policy.yaml", "--", "npx", "-y", "server", ...]
//
// keeping env, cwd, envFile, type and every other member as they are: the
// client still starts the process with them, and mcpguard passes its
// environment and working directory to the server. The command written
// is the absolute path of the running binary (os.Executable), so that a
// client started without the user's PATH finds it; --command PATH writes
// another (plain `mcpguard` to rely on PATH). HTTP and SSE entries are
// listed as remote and left alone: nothing runs locally to guard. A stdio
// bridge to a remote server (mcp-remote) is a stdio server and is wrapped.
// An entry whose command holds spaces and is no file is skipped: some
// clients run command through a shell and some do not, and the split a
// shell would make is not for wrap to guess. So is a Windows command (a
// drive letter or UNC path): mcpguard does not run on Windows.
//
// An entry whose command is mcpguard (the path wrap writes, or any program
// named mcpguard, versioned or not: mcpguard-1.2, mcpguard_v2) is guarded,
// and so is one that starts mcpguard through a launcher (env, npx, bunx,
// pnpm/yarn dlx, uvx, pipx run, sh -c "mcpguard ..."): wrap leaves it
// alone, so wrapping twice changes nothing, and unwrap leaves a launched
// one for the user to undo. One exception: an entry wrap guarded with the baseline
// (args ["--", ...]) gets --policy P in front when a later wrap is given
// --policy-dir and a policy fits. unwrap takes the server's argv back from after the
// first "--": the word after it returns to command, the rest stays in
// args. Nothing else is stored, in the entry or elsewhere.
//
// # Lossless edits
//
// Files are parsed with github.com/tailscale/hujson (JSON with comments
// and trailing commas, which Cursor and VS Code accept) and must also
// decode strictly (no duplicate names) so that wrap reads each entry as
// the client does. Edits are JSON Patch operations that hujson applies to
// the parsed file, which keeps every byte it is not told to change:
// comments, member order, indentation, trailing commas. The original
// command's bytes move into args unchanged, the inserted arguments take
// the array's own separator, and unwrap puts back the whitespace and
// comments that preceded the first argument, so unwrap after wrap gives
// the file back byte for byte. One exception: an entry without args gets
// an args member (last); unwrap removes an empty args only in that last
// place, so an explicit empty "args": [] written last comes back absent
// (which every client reads alike).
//
// # Writes
//
// Project files (.mcp.json, .vscode/mcp.json) are often committed: the
// absolute paths wrap writes there are this machine's, and wrap says so
// when it changes one.
//
// Before mcpguard first changes a file, FILE.mcpguard-backup receives it
// as it was; it is never overwritten, so it stays the file before
// mcpguard whatever runs follow. Agents rewrite their configs often
// (Claude Code rewrites ~/.claude.json on every run), so no write of
// theirs may be lost (commit): the file is locked against other mcpguard
// runs (flock), the new content is written to a synced temporary file in
// the same directory with the file's mode, the file is read again
// immediately before it is replaced, and it is replaced by an atomic
// exchange (renameat2 RENAME_EXCHANGE, macOS RENAME_SWAP) whose
// displaced file is checked too: a write that landed meanwhile is put
// back. A config that changed is read and edited again, up to five times,
// then reported and left as it is. A symlinked config is written through
// the link. A file its owner made read-only is refused, even for root. A
// file that cannot be parsed or written is reported and left as it is;
// the other files are still handled, and the exit status is 1. --dry-run
// writes nothing and prints a unified diff (github.com/aymanbagabas/go-udiff,
// the maintained export of gopls' diff) of each file it would change.
//
// # Policies
//
// Without --policy-dir, entries get no --policy and the embedded baseline
// applies. With --policy-dir DIR, each server wrap guards gets
// DIR/CLIENT[-PROJECT-HASH]-NAME.yaml (-2, -3 for names that reduce alike
// in one run), referenced by absolute path: a copy of
// the shipped policy written for its package when one fits
// (the packages and binaries of the shipped table: the reference
// servers, mcp-server-git, mcp-server-fetch, github-mcp-server,
// @playwright/mcp, chrome-devtools-mcp, desktop-commander, context7,
// notion, supabase, sentry, firecrawl, kubernetes and more; matched on
// the command's words with versions, paths and image tags stripped), else,
// with --init, the starter policy `mcpguard init` writes (it starts the
// server with mcpguard's environment, not the entry's env or cwd). A file
// already in DIR is used as it is and never overwritten. When init fails,
// the server is still guarded, by the baseline, and the failure is
// reported. @modelcontextprotocol/server-github is not matched to
// github.yaml, which is written against github-mcp-server's tool names.
// A copied policy's path_scope roots (${HOME}/src in filesystem.yaml and
// git.yaml) become the existing directories the server is given in its
// arguments (its allowed directories, --repository=DIR), read by
// policy.ServerDirs as init and path_scope read them: the copy then
// neither refuses the server's ordinary work nor allows more. An entry
// whose directory only the agent knows (${workspaceFolder}, or a relative
// path in a user file's entry without cwd) gets client_roots: true in
// place of the roots: the directories the agent gives the server when it
// starts it. A server given no directory keeps the shipped roots, and
// wrap says to review them.
//
// # Status
//
// One line per configured server: client, name, state (guarded,
// UNGUARDED, BROKEN, remote, skipped, and UNKNOWN for a config that could
// not be read or parsed: its servers are not counted, and the summary
// names it), policy, lock state, and the rejections the log holds for
// the server's log name (its policy's server:, else its command's base
// name, as mcpguard logs it) in the last 24 hours; wrap names each policy
// copy after its entry, so each entry's rejections count apart. The lock
// state comes from the policy's pins: lock file (LockState): "session"
// without one, "N tools" pinned, "missing" (mcpguard will not start the
// server: run mcpguard pin), "invalid", or "?" when the policy does not
// load.
//
// A guarded entry is BROKEN when it cannot start: the program it runs is
// missing, not executable or not on PATH, its policy is missing or does
// not load, or its lock file is missing or invalid (StartProblem). A
// stdio server run from a package or image without a pinned version (npx
// pkg, uvx pkg, pipx run pkg, docker run image without a digest:
// Unpinned) gets an "unpinned" note and is counted in the summary (OWASP
// MCP04, supply chain).
package agentconfig
