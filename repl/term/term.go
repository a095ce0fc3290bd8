// Package term is the REPL's terminal: chzyer/readline behind
// repl.Terminal. It is the only part of the REPL that links readline, so
// that flowq query, run and serve, which use repl.Session, do not.
package term

import (
	"errors"
	"io"
	"os"

	"github.com/chzyer/readline"

	"github.com/flowq/flowq/repl"
)

func init() { repl.TerminalSize = Size }

// Size is the size of w when it is a terminal.
func Size(w io.Writer) (cols, rows int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || !readline.IsTerminal(int(f.Fd())) {
		return 0, 0, false
	}
	cols, rows, err := readline.GetSize(int(f.Fd()))
	return cols, rows, err == nil && cols > 0 && rows > 0
}

// Open is a repl.Terminal reading with readline: prompts, history (saved
// by the REPL, one whole statement at a time), completion, Ctrl-C.
func Open(c repl.TerminalConfig) (repl.Terminal, error) {
	var ac readline.AutoCompleter
	if c.Complete != nil {
		ac = completer(c.Complete)
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 repl.Prompt,
		HistoryFile:            c.HistoryFile,
		HistoryLimit:           1000,
		DisableAutoSaveHistory: true, // a statement is saved once, whole, by the REPL
		HistorySearchFold:      true,
		AutoComplete:           ac,
		Stdin:                  readline.NewCancelableStdin(c.Stdin),
		Stdout:                 c.Stdout,
		Stderr:                 c.Stderr,
	})
	if err != nil {
		return nil, err
	}
	return &terminal{rl: rl}, nil
}

type completer func(line []rune, pos int) ([][]rune, int)

func (f completer) Do(line []rune, pos int) ([][]rune, int) { return f(line, pos) }

type terminal struct{ rl *readline.Instance }

func (t *terminal) Readline(prompt string) (string, error) {
	t.rl.SetPrompt(prompt)
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", repl.ErrInterrupt
	}
	if err != nil {
		return "", err
	}
	// With DisableAutoSaveHistory, readline leaves its history cursor on
	// an entry recalled with Up, and would save that entry's edited line
	// instead of the statement given to SaveHistory. Saving the empty
	// string (which readline does not store) moves the cursor back to the
	// end, as readline's own Enter does.
	_ = t.rl.SaveHistory("")
	return line, nil
}

func (t *terminal) SaveHistory(entry string) error { return t.rl.SaveHistory(entry) }

func (t *terminal) Close() error { return t.rl.Close() }
