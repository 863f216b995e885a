package shellcmd

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"

	"github.com/mcpguard/mcpguard/rules"
)

// dialect is one reading of a command line.
type dialect struct {
	name string
	lang syntax.LangVariant
}

var dialects = []dialect{{"bash", syntax.LangBash}, {"sh", syntax.LangPOSIX}}

const (
	// maxDepth bounds sh -c nesting: each level is parsed again.
	maxDepth = 8
	// maxWords bounds the words one line may expand to (brace expansion
	// multiplies them).
	maxWords = 4096
	// maxBytes and maxOpeners bound the parser's work: it recurses once
	// per nested group or substitution, and a command line an agent sends
	// is a few hundred bytes.
	maxBytes   = 64 << 10
	maxOpeners = 256
)

// field is one word as the shell passes it to a program. known is false
// when part of it comes from a variable or arithmetic, whose value the
// check cannot see (and which word splitting may cut into several).
type field struct {
	text  string
	known bool
}

// reader walks one parsed line.
type reader struct {
	c     *Check
	d     dialect
	depth int
	words int
	// seen receives the argv of every simple command of the line, for
	// the differential test against bash; nil outside tests.
	seen func(argv []field)
}

// judge reads src as a command line of dialect d and judges it.
func (c *Check) judge(src string, d dialect, depth int) *rules.Finding {
	r := &reader{c: c, d: d, depth: depth}
	return r.line(src)
}

func (r *reader) line(src string) *rules.Finding {
	if r.depth > maxDepth {
		return refuse("shell command strings nested deeper than %d", maxDepth)
	}
	if len(src) > maxBytes {
		return refuse("a command line longer than %d bytes", maxBytes)
	}
	openers := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '`':
			if openers++; openers > maxOpeners {
				return refuse("more than %d groups, braces and substitutions in one command line", maxOpeners)
			}
		}
		// NUL cuts the string where the shell's caller stops reading;
		// bash keeps CR and other controls inside words where the
		// parser drops them.
		if b := src[i]; b < 0x20 && b != '\t' && b != '\n' || b == 0x7f {
			return refuse("a control character in a command line")
		}
	}
	f, err := syntax.NewParser(syntax.Variant(r.d.lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		return refuse("the %s reading of the command does not parse", r.d.name)
	}
	if len(f.Stmts) > 1 && !r.c.syntax[Lists] {
		return refuse("several commands in one line (lists are not allowed)")
	}
	return r.stmts(f.Stmts)
}

func (r *reader) stmts(list []*syntax.Stmt) *rules.Finding {
	for _, s := range list {
		if f := r.stmt(s); f != nil {
			return f
		}
	}
	return nil
}

func (r *reader) need(s Syntax, what string) *rules.Finding {
	if r.c.syntax[s] {
		return nil
	}
	return refuse("%s (%s are not allowed)", what, s)
}

func (r *reader) stmt(s *syntax.Stmt) *rules.Finding {
	if s.Coprocess || s.Disown {
		return refuse("coprocesses are not judged")
	}
	if s.Background {
		if f := r.need(Background, "a command run in the background"); f != nil {
			return f
		}
	}
	for _, rd := range s.Redirs {
		if f := r.redirect(rd); f != nil {
			return f
		}
	}
	if s.Cmd == nil {
		return nil
	}
	return r.command(s.Cmd)
}

func (r *reader) command(cmd syntax.Command) *rules.Finding {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		return r.call(x)
	case *syntax.BinaryCmd:
		var f *rules.Finding
		switch x.Op {
		case syntax.Pipe, syntax.PipeAll:
			f = r.need(Pipes, "a pipe")
		default:
			f = r.need(Lists, "a command list")
		}
		if f != nil {
			return f
		}
		if f := r.stmt(x.X); f != nil {
			return f
		}
		return r.stmt(x.Y)
	case *syntax.Block:
		if f := r.need(Groups, "a command group"); f != nil {
			return f
		}
		return r.stmts(x.Stmts)
	case *syntax.Subshell:
		if f := r.need(Groups, "a subshell"); f != nil {
			return f
		}
		return r.stmts(x.Stmts)
	case *syntax.IfClause:
		if f := r.need(Control, "an if clause"); f != nil {
			return f
		}
		for c := x; c != nil; c = c.Else {
			if f := r.stmts(c.Cond); f != nil {
				return f
			}
			if f := r.stmts(c.Then); f != nil {
				return f
			}
		}
		return nil
	case *syntax.WhileClause:
		if f := r.need(Control, "a loop"); f != nil {
			return f
		}
		if f := r.stmts(x.Cond); f != nil {
			return f
		}
		return r.stmts(x.Do)
	case *syntax.ForClause:
		if f := r.need(Control, "a loop"); f != nil {
			return f
		}
		wi, ok := x.Loop.(*syntax.WordIter)
		if !ok {
			return refuse("a C-style for loop evaluates arithmetic")
		}
		for _, w := range wi.Items {
			if f := r.argWord(w); f != nil {
				return f
			}
		}
		return r.stmts(x.Do)
	case *syntax.CaseClause:
		if f := r.need(Control, "a case clause"); f != nil {
			return f
		}
		if f := r.argWord(x.Word); f != nil {
			return f
		}
		for _, item := range x.Items {
			for _, p := range item.Patterns {
				if f := r.argWord(p); f != nil {
					return f
				}
			}
			if f := r.stmts(item.Stmts); f != nil {
				return f
			}
		}
		return nil
	case *syntax.TimeClause:
		if x.Stmt == nil {
			return nil
		}
		return r.stmt(x.Stmt)
	case *syntax.FuncDecl:
		return refuse("a function definition can give a program's name to other commands")
	case *syntax.ArithmCmd, *syntax.LetClause:
		return refuse("arithmetic evaluation can run commands through array subscripts")
	case *syntax.TestClause:
		return refuse("[[ ]] evaluates arithmetic, which can run commands through array subscripts")
	case *syntax.DeclClause:
		return refuse("%s sets variables and attributes the check cannot follow", x.Variant.Value)
	default:
		return refuse("a %T command is not judged", cmd)
	}
}

// call judges a simple command: its assignments, then the program it
// runs with its arguments.
func (r *reader) call(x *syntax.CallExpr) *rules.Finding {
	for _, a := range x.Assigns {
		if f := r.assign(a); f != nil {
			return f
		}
	}
	if len(x.Args) == 0 {
		return nil
	}
	if f := r.programWord(x.Args[0]); f != nil {
		return f
	}
	for _, w := range x.Args[1:] {
		if f := r.argWord(w); f != nil {
			return f
		}
	}
	argv, f := r.fields(x.Args)
	if f != nil {
		return f
	}
	if r.seen != nil {
		r.seen(argv)
	}
	return r.run(argv)
}

func (r *reader) assign(a *syntax.Assign) *rules.Finding {
	if a.Name == nil || a.Array != nil || a.Index != nil {
		return refuse("an array assignment is not judged")
	}
	if !r.c.env[a.Name.Value] {
		return refuse("an assignment to a variable the policy's env does not list")
	}
	if a.Value != nil {
		return r.argWord(a.Value)
	}
	return nil
}

// redirect allows duplicating descriptors and /dev/null always, here
// documents and strings (input the program reads) after their words are
// judged, and files under Redirects.
func (r *reader) redirect(rd *syntax.Redirect) *rules.Finding {
	if rd.N != nil && !isDigits(rd.N.Value) {
		return refuse("a {var} redirection assigns a variable")
	}
	if rd.Hdoc != nil {
		if f := r.argWord(rd.Hdoc); f != nil {
			return f
		}
	}
	if f := r.argWord(rd.Word); f != nil {
		return f
	}
	switch rd.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return nil
	case syntax.DplIn, syntax.DplOut:
		if lit := rd.Word.Lit(); lit == "-" || isDigits(lit) {
			return nil
		}
	}
	if rd.Word.Lit() == "/dev/null" {
		return nil
	}
	return r.need(Redirects, "a redirection to or from a file")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// programWord refuses a program name whose value only the running shell
// knows.
func (r *reader) programWord(w *syntax.Word) *rules.Finding {
	if f := r.walkWord(w, true); f != nil {
		return f
	}
	pat, err := expand.Pattern(nil, w)
	if err != nil || pattern.HasMeta(pat, pattern.ExtendedOperators) {
		return refuse("a glob in a program name runs whatever file matches")
	}
	return nil
}

func (r *reader) argWord(w *syntax.Word) *rules.Finding {
	if w == nil {
		return nil
	}
	if f := r.walkWord(w, false); f != nil {
		return f
	}
	if !r.c.syntax[Globs] {
		if pat, err := expand.Pattern(nil, w); err != nil || pattern.HasMeta(pat, pattern.ExtendedOperators) {
			return refuse("a glob in an argument (globs are not allowed)")
		}
	}
	return nil
}

// walkWord looks through every part of a word, quotes and parameter
// defaults included, for what only the running shell can expand.
func (r *reader) walkWord(w *syntax.Word, program bool) *rules.Finding {
	if split := *w; !r.c.syntax[Braces] && syntax.SplitBraces(&split) {
		return refuse("brace expansion (braces are not allowed)")
	}
	var found *rules.Finding
	syntax.Walk(w, func(n syntax.Node) bool {
		if found != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			found = refuse("command substitution runs a command the check cannot see")
		case *syntax.ProcSubst:
			found = refuse("process substitution runs a command the check cannot see")
		case *syntax.ParamExp, *syntax.ArithmExp:
			if program {
				found = refuse("a program name that comes from a variable or arithmetic")
			} else if !r.c.syntax[Variables] {
				found = refuse("a variable or arithmetic in an argument (variables are not allowed)")
			} else if pe, ok := x.(*syntax.ParamExp); ok && (pe.Excl || pe.Index != nil || pe.Names != 0 ||
				pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps) {
				// ${!x} and ${a[...]} evaluate names and arithmetic;
				// ${x@P} expands a prompt, which runs $(...) in the value.
				found = refuse("an indirect, indexed or transforming expansion evaluates text the check cannot see")
			}
		case *syntax.ExtGlob:
			if program {
				found = refuse("a glob in a program name runs whatever file matches")
			} else if !r.c.syntax[Globs] {
				found = refuse("an extended glob (globs are not allowed)")
			}
		}
		return found == nil
	})
	return found
}

// homes answers tilde expansion without reading the system's user
// database: ~ is /~ and ~name is /~name, a directory outside every
// system directory, as the home of the server's user is.
var homes = expand.FuncEnviron(func(name string) string {
	if user, ok := strings.CutPrefix(name, "HOME"); ok {
		return "/~" + strings.TrimPrefix(user, " ")
	}
	return ""
})

// fields expands words into the argv the shell passes, as bash does:
// brace expansion, tilde, quote removal, ANSI-C escapes. Globs stay as
// written (the check never reads the disk); a word holding a variable
// gives one field marked unknown.
func (r *reader) fields(words []*syntax.Word) ([]field, *rules.Finding) {
	var out []field
	for _, w := range words {
		known := true
		syntax.Walk(w, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.ParamExp, *syntax.ArithmExp:
				known = false
			}
			return known
		})
		if !known {
			out = append(out, field{known: false})
			r.words++
			continue
		}
		cfg := expand.Config{Env: homes}
		for text, err := range expand.FieldsSeq(&cfg, w) {
			if err != nil {
				return nil, refuse("a word the check cannot expand")
			}
			// The kernel reads each argument up to its first NUL
			// ($'rm\0x' runs rm).
			if i := strings.IndexByte(text, 0); i >= 0 {
				text = text[:i]
			}
			out = append(out, field{text: text, known: true})
			r.words++
			if r.words > maxWords {
				return nil, refuse("the command expands to more than %d words", maxWords)
			}
		}
	}
	return out, nil
}
