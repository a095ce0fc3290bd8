package repl

import (
	"strings"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// Complete is the REPL's completion for a program's text up to the
// cursor (statements and, between them, dot-commands), for other front
// ends (flowq serve's web page): the word being typed and the endings
// that complete it, each ending with a space (or "/" for a directory).
// File names are not offered: a web page's user does not see the
// server's files.
func Complete(cfg *normalform.Config, text string) (word string, endings []string) {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	c := &completer{symbols: symbols(cfg), keywords: append(lang.Keywords(), levels()...)}
	// The statement being typed starts after the last ";" outside
	// comments and strings; split knows where that is.
	_, rest, _ := split(text)
	pending, line := "", rest
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		pending, line = line[:i], line[i+1:]
	}
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), ".") && strings.TrimSpace(pending) == "" {
		return "", nil
	}
	return c.complete(pending, line)
}
