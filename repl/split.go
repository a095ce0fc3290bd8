package repl

import (
	"strings"
	"unicode"

	"github.com/flowq/flowq/lang"
)

// The statement splitter: the REPL reads lines, and a statement ends at a
// ";" that is outside comments ("--" or "#" to the end of the line) and
// strings ("…", backslash escapes), as lang.Step (the machine lang's
// scanner cuts scripts with) reads them. What follows the last ";" is the
// open statement; it is open only when it holds something besides
// whitespace and comments.

// piece is one statement of a buffer, through its ";".
type piece struct {
	Text   string // the statement's text, with the whitespace before it, through its ";"
	Offset int    // byte offset of Text in the buffer
}

// split cuts src at every ";" outside comments and strings: the complete
// statements, then the rest (the start of an open statement, or only
// whitespace and comments). state is where the scan ends (lang.InComment when
// the last line ends in a comment, lang.InString inside a string).
func split(src string) (stmts []piece, rest string, state lang.LexState) {
	start := 0
	state = lang.InCode
	for i := 0; i < len(src); {
		if state == lang.InCode && src[i] == ';' {
			stmts = append(stmts, piece{Text: src[start : i+1], Offset: start})
			start = i + 1
		}
		next, n, _ := lang.Step(src, i, state)
		state, i = next, i+n
	}
	return stmts, src[start:], state
}

// open reports whether src ends inside a statement: after its last ";"
// (outside comments and strings) there is more than whitespace and
// comments.
func open(src string) bool {
	_, rest, _ := split(src)
	return !blank(rest)
}

// blank reports whether src is only whitespace, comments and ";".
func blank(src string) bool {
	return strings.TrimFunc(code(src), func(r rune) bool { return unicode.IsSpace(r) || r == ';' }) == ""
}

// code is src without its comments (strings kept as they are).
func code(src string) string {
	var b strings.Builder
	state := lang.InCode
	for i := 0; i < len(src); {
		next, n, isCode := lang.Step(src, i, state)
		if isCode {
			b.WriteString(src[i : i+n])
		}
		state, i = next, i+n
	}
	return b.String()
}

// historyEntry is a statement as one line of history: comments dropped
// (a comment inside a line would swallow the rest once the lines are
// joined), runs of whitespace outside strings made one space.
func historyEntry(stmt string) string {
	src := code(stmt)
	var b strings.Builder
	state := lang.InCode
	space := false
	for _, r := range src {
		switch state {
		case lang.InString:
			switch r {
			case '\\':
				state = lang.InEscape
			case '"':
				state = lang.InCode
			}
		case lang.InEscape:
			state = lang.InString
		default:
			if unicode.IsSpace(r) {
				space = true
				continue
			}
			if r == '"' {
				state = lang.InString
			}
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if r == '\n' || r == '\r' { // a newline inside a string: one line of history
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}
