package lang

import (
	"fmt"
	"unicode/utf8"
)

// Limits on a query's text, checked by a linear scan before anything is
// parsed. participle's parser recurses once per level of parentheses, and
// a Go stack overflow is fatal, not an error; its token buffer grows with
// the text. No query a person writes comes near either limit; a query a
// program writes and that passes them still parses in memory linear in
// its text (a 20,000-term "or" of 1 MB: under 200 MB for the whole
// process, ARCHITECTURE.md, "Bad input").
const (
	// MaxNesting is how deep parentheses may nest in a statement.
	MaxNesting = 256
	// MaxQueryBytes is how long one statement may be, in bytes, from the
	// end of the one before it through its ";". A script may hold any
	// number of statements: each is parsed on its own.
	MaxQueryBytes = 1 << 20
)

// piece is one statement of a script, as the scanner cut it: the bytes
// [From.Offset, End), through its ";" when it has one. Code is where its
// first byte of code is (HasCode), past whitespace and comments; Semi is
// where its ";" is (End is after it).
type piece struct {
	From, Code, Semi Pos
	End              int
	HasCode, HasSemi bool
}

// LexState is where a lexical scan of query text stands: in code, in a
// comment ("--" or "#" to the end of the line), in a string ("…", with
// backslash escapes) or just after a backslash in one. Step is the one
// machine that reads it: this package's scanner cuts scripts with it,
// and the REPL cuts the lines it reads.
type LexState uint8

const (
	InCode    LexState = iota
	InComment          // to the end of the line
	InString           // after an opening quote
	InEscape           // after a backslash in a string
)

// Step scans the byte at src[i] from state s: the state after it, how
// many bytes it took (2 for "--"), and whether they are code rather than
// comment (a string is code).
func Step(src string, i int, s LexState) (next LexState, n int, isCode bool) {
	c := src[i]
	switch s {
	case InComment:
		if c == '\n' {
			return InCode, 1, true
		}
		return InComment, 1, false
	case InString:
		switch c {
		case '\\':
			return InEscape, 1, true
		case '"':
			return InCode, 1, true
		}
		return InString, 1, true
	case InEscape:
		return InString, 1, true
	}
	switch {
	case c == '#':
		return InComment, 1, false
	case c == '-' && i+1 < len(src) && src[i+1] == '-':
		return InComment, 2, false
	case c == '"':
		return InString, 1, true
	}
	return InCode, 1, true
}

// TooLong reports whether a statement of n bytes, counted from its first
// byte of code through its ";", passes MaxQueryBytes: the test this
// package's scanner makes on a whole script and the REPL on a statement
// it reads a line at a time.
func TooLong(n int) bool { return n > MaxQueryBytes }

// scanner cuts a script into statements at every ";" in code (Step), and
// checks each against MaxQueryBytes and MaxNesting before it is parsed.
// It reads each byte once and allocates nothing.
type scanner struct {
	file, src string
	at        Pos // the next byte's
}

// newScanner scans src, whose first byte is at position at of its input
// (Line 1, Column 1 for a text of its own).
func newScanner(file, src string, at Pos) *scanner {
	at.Offset = 0
	return &scanner{file: file, src: src, at: at}
}

// advance moves the position over n bytes.
func (s *scanner) advance(n int) {
	for range n {
		c := s.src[s.at.Offset]
		s.at.Offset++
		switch {
		case c == '\n':
			s.at.Line, s.at.Column = s.at.Line+1, 1
		case utf8.RuneStart(c):
			s.at.Column++
		}
	}
}

// next returns the next statement; false at the end of src, or with an
// error naming the limit a statement passes.
func (s *scanner) next() (piece, bool, *Error) {
	src := s.src
	if s.at.Offset >= len(src) {
		return piece{}, false, nil
	}
	pc := piece{From: s.at}
	state, depth := InCode, 0
	for s.at.Offset < len(src) {
		at, c, prev := s.at, src[s.at.Offset], state
		var n int
		state, n, _ = Step(src, at.Offset, prev)
		s.advance(n)
		if prev != InCode || state == InComment {
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '(':
			if depth++; depth > MaxNesting {
				return piece{}, false, newError(s.file, src, at, "parentheses nested %d deep here, over the limit of %d", depth, MaxNesting)
			}
		case ')':
			depth = max(depth-1, 0)
		case ';':
			pc.Semi, pc.HasSemi, pc.End = at, true, s.at.Offset
			return pc, true, s.checkSize(pc)
		}
		if !pc.HasCode {
			pc.Code, pc.HasCode = at, true
		}
	}
	pc.End = len(src)
	return pc, true, s.checkSize(pc)
}

// checkSize refuses a statement over MaxQueryBytes, counted from its
// first byte of code through its ";".
func (s *scanner) checkSize(pc piece) *Error {
	if n := pc.End - pc.Code.Offset; pc.HasCode && TooLong(n) {
		return newError(s.file, s.src, pc.Code, "this statement is %d bytes long, over the limit of %d bytes (%s) on one statement", n, MaxQueryBytes, SizeText(MaxQueryBytes))
	}
	return nil
}

// SizeText writes a byte count the way people read it: 1 MiB.
func SizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
