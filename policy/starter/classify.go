package starter

import (
	"strings"
	"unicode"

	"github.com/mcpguard/mcpguard/rules/canon"
	"github.com/mcpguard/mcpguard/rules/lazyregexp"
)

// The generator guesses what a field holds from its member name (and, for
// paths, from its schema description). The guesses are deliberately
// simple and documented in policies/README.md, so that a person reviewing a
// starter policy can predict it.

// pathNames are normalised member names (lower case, without _ and -) of
// fields that hold a filesystem path or a file URI.
var pathNames = set("path", "paths", "file", "files", "filename", "filenames",
	"filepath", "filepaths", "dir", "dirs", "directory", "directories", "folder",
	"source", "destination", "src", "dst", "dest", "uri", "uris", "root", "roots",
	"cwd", "workdir", "workingdirectory", "repopath", "rootdir", "basedir")

// pathSuffixes catch compound names: outputPath, repo_path, base_dir, configFile.
var pathSuffixes = []string{"path", "paths", "dir", "directory", "filename", "folder", "uri"}

// pathDescription matches schema descriptions that say a string is a path.
var pathDescription = lazyregexp.New(`(?i)\b(file ?paths?|directory paths?|paths? (to|of) (a |the )?(file|director)|file ?names?|file uris?|file://|folder)\b|^(absolute |relative )?paths?\b`)

// argvNames are names of string arrays that a server hands to a command
// line: the place for flag injection (--rootdir=/tmp) and shell
// metacharacters.
var argvNames = set("args", "argv", "arguments", "testargs", "flags", "command",
	"commandargs", "extraargs", "cmd", "cmdargs", "options", "cliargs")

// commandNames are string fields that look like a command line of their own.
var commandNames = set("command", "cmd", "script", "shell", "commandline")

// freeTextNames are fields meant for prose or file content: control
// characters (newlines, tabs) are their normal contents, so control_chars
// is not proposed for them.
var freeTextNames = set("content", "contents", "text", "body", "message",
	"messages", "description", "query", "prompt", "comment", "comments", "note",
	"notes", "title", "summary", "instructions", "observation", "observations",
	"input", "data", "patch", "diff", "code", "markdown", "html", "reason",
	"answer", "question", "topic")

// freeTextSuffixes catch oldText, newText, commitMessage, issueBody, and
// desktop-commander's old_string and new_string (file content to replace).
var freeTextSuffixes = []string{"text", "content", "contents", "body", "message", "description", "comment", "string", "observations", "markdown", "prompt"}

// destructiveWords are name words of tools whose calls destroy, publish or
// run something: the starter marks them for review (it still lists them,
// since the policy starts in audit mode). "write", "create", "edit",
// "update" and "move" are not on the list: they are the ordinary work of
// most servers and are bounded by path_scope.
var destructiveWords = set("delete", "del", "remove", "rm", "drop", "destroy",
	"purge", "erase", "wipe", "truncate", "reset", "push", "force", "exec",
	"execute", "eval", "shell", "kill", "terminate", "merge", "overwrite",
	"uninstall", "revoke", "unlink", "rmdir", "format", "publish", "deploy")

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// norm lower-cases a member name and drops _ and -, so that file_path,
// filePath and file-path compare equal.
func norm(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r == '-' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func hasSuffix(n string, suffixes []string) bool {
	for _, s := range suffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

func isPathField(name, description string) bool {
	n := norm(name)
	if pathNames[n] || hasSuffix(n, pathSuffixes) {
		return true
	}
	return description != "" && pathDescription().MatchString(description)
}

func isFreeText(name string) bool {
	n := norm(name)
	return freeTextNames[n] || hasSuffix(n, freeTextSuffixes)
}

// destructive returns the first word of the tool name that sounds destructive.
func destructive(name string) string {
	for _, w := range canon.Words(name) {
		if destructiveWords[w] {
			return w
		}
	}
	return ""
}

// Tools that are dangerous for what they do rather than what they destroy:
// the starter marks them for review with the reason, like destructive ones.
var (
	processWords = set("process", "processes", "spawn", "exec", "execute", "shell", "terminal", "subprocess")
	runWords     = set("run", "start", "launch", "execute", "exec")
	commandWords = set("command", "commands", "cmd", "script", "program")
	configWords  = set("config", "configuration", "settings", "setting", "preferences")
	changeWords  = set("set", "update", "change", "write", "add", "remove", "edit", "modify", "put", "toggle")
	allowedWords = set("allowed", "allow", "permitted", "roots", "root", "directories", "dirs")
	envWords     = set("env", "environment", "printenv", "environ", "getenv")
	fetchWords   = set("fetch", "download", "http", "https", "url", "urls", "browse", "curl", "wget", "request", "scrape", "crawl", "webpage")
)

// urlDescription matches schema descriptions that say a string is a URL
// (server-everything's gzip-file-as-resource fetches its "data").
var urlDescription = lazyregexp.New(`\bURLs?\b|https?://`)

// fetchDescription matches tool descriptions that say the tool reads
// from the web ("Read the contents of a file from the file system or a URL").
var fetchDescription = lazyregexp.New(`(?i)\b(from|fetch(es)?|downloads?|retrieves?|gets?|reads?) (a |the |any )?(web ?pages?|URLs?)\b|\bor (a |an )?URL\b`)

// urlNames are member names of fields that hold a URL the server fetches.
var urlNames = set("url", "urls", "href", "link", "endpoint", "webhook", "webhookurl")

// dangers lists why a tool needs a person's review beyond destroying
// things: it runs processes or shell commands (commandField names the
// field that holds a command line), changes the server's own
// configuration or allowed directories, reads the environment, or fetches
// URLs. The words come from the tool's name and its fields' names.
func dangers(name, description, commandField string, hasURLField bool) []string {
	ws := canon.Words(name)
	has := func(m map[string]bool) bool {
		for _, w := range ws {
			if m[w] {
				return true
			}
		}
		return false
	}
	var out []string
	switch {
	case commandField != "":
		out = append(out, "runs the shell command line in "+commandField+" on the server's machine; the shell_command rule below refuses what it cannot judge and a few programs, but only a person can bound it: deny it, or list the programs it may start")
	case has(processWords) || has(runWords) && has(commandWords):
		out = append(out, "runs or drives processes on the server's machine")
	}
	if has(configWords) && has(changeWords) || has(allowedWords) && has(changeWords) {
		out = append(out, "changes the server's own configuration, which may widen its allowed directories or commands")
	}
	if has(envWords) {
		out = append(out, "reads the server's environment, where credentials often live")
	}
	if has(fetchWords) || hasURLField || fetchDescription().MatchString(description) {
		out = append(out, "fetches URLs: internal addresses and cloud metadata are reachable unless a url rule bounds them")
	}
	return out
}
