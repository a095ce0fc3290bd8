package lang

import "strings"

// Keywords returns the language's reserved words (in lower case; the
// lexer matches them without regard to case), in the order the lexer
// lists them. The REPL completes them.
func Keywords() []string { return strings.Split(keywords, "|") }
