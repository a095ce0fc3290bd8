package repl

import (
	"strings"
	"unicode"
)

// The statement splitter: the REPL reads lines, and a statement ends at a
// ";" that is outside comments ("--" or "#" to the end of the line) and
// strings ("…", backslash escapes), as the lexer of package lang reads
// them. What follows the last ";" is the open statement; it is open only
// when it holds something besides whitespace and comments.

// lexState is where a scan stands after some text.
type lexState uint8

const (
	inCode    lexState = iota
	inComment          // to the end of the line
	inString           // after an opening quote
	inEscape           // after a backslash in a string
)

// piece is one statement of a buffer, through its ";".
type piece struct {
	Text   string // the statement's text, with the whitespace before it, through its ";"
	Offset int    // byte offset of Text in the buffer
}

// step scans the byte at src[i] from state s: the state after it, how
// many bytes it took (2 for "--"), and whether they are code rather than
// comment. It is the one scanner split and code share.
func step(src string, i int, s lexState) (next lexState, n int, isCode bool) {
	c := src[i]
	switch s {
	case inComment:
		if c == '\n' {
			return inCode, 1, true
		}
		return inComment, 1, false
	case inString:
		switch c {
		case '\\':
			return inEscape, 1, true
		case '"':
			return inCode, 1, true
		}
		return inString, 1, true
	case inEscape:
		return inString, 1, true
	}
	switch {
	case c == '#':
		return inComment, 1, false
	case c == '-' && i+1 < len(src) && src[i+1] == '-':
		return inComment, 2, false
	case c == '"':
		return inString, 1, true
	}
	return inCode, 1, true
}

// split cuts src at every ";" outside comments and strings: the complete
// statements, then the rest (the start of an open statement, or only
// whitespace and comments). state is where the scan ends (inComment when
// the last line ends in a comment, inString inside a string).
func split(src string) (stmts []piece, rest string, state lexState) {
	start := 0
	state = inCode
	for i := 0; i < len(src); {
		if state == inCode && src[i] == ';' {
			stmts = append(stmts, piece{Text: src[start : i+1], Offset: start})
			start = i + 1
		}
		next, n, _ := step(src, i, state)
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
	state := inCode
	for i := 0; i < len(src); {
		next, n, isCode := step(src, i, state)
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
	state := inCode
	space := false
	for _, r := range src {
		switch state {
		case inString:
			switch r {
			case '\\':
				state = inEscape
			case '"':
				state = inCode
			}
		case inEscape:
			state = inString
		default:
			if unicode.IsSpace(r) {
				space = true
				continue
			}
			if r == '"' {
				state = inString
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
