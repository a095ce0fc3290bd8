package repl

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"unicode/utf8"
)

// toOutput runs fn, a statement's run, with the session writing where
// the statement's result goes: the file of .once (once), the file of
// .output, or standard output. When standard output is a terminal,
// tables are fitted to its width and, with .pager on, a result longer
// than the screen goes through the pager.
func (r *REPL) toOutput(fn func() error) error {
	out, width := r.sess.Out, r.sess.Table.Width
	defer func() { r.sess.Out, r.sess.Table.Width = out, width }()
	if f := r.onceFile; f != nil {
		r.onceFile = nil
		r.sess.Out = f
		err := fn()
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		return err
	}
	if r.sess.Out != r.stdout {
		return fn()
	}
	cols, rows, tty := termSize(r.stdout)
	if !tty {
		return fn()
	}
	r.sess.Table.Width = cols
	if !r.pagerOn {
		return fn()
	}
	var buf bytes.Buffer
	r.sess.Out = &buf
	err := fn()
	r.sess.Out = out
	if screenLines(buf.Bytes(), cols) < rows {
		_, werr := r.stdout.Write(buf.Bytes())
		return firstErr(err, werr)
	}
	if perr := r.page(buf.Bytes()); perr != nil {
		fmt.Fprintf(r.stderr, "pager: %v (.pager off turns it off)\n", perr)
		_, werr := r.stdout.Write(buf.Bytes())
		return firstErr(err, werr)
	}
	return err
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// screenLines counts the lines text takes on a terminal cols wide.
func screenLines(text []byte, cols int) int {
	n := 0
	for _, line := range bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n")) {
		n += max(1, (utf8.RuneCount(line)+cols-1)/cols)
	}
	return n
}

// pagerCommand is $PAGER, or less (with LESS=FRX when LESS is not set,
// as git does: quit when the text fits, keep colours, leave the text on
// the screen) when it is installed; "" when there is none.
func pagerCommand() (cmd string, env []string) {
	if p, ok := os.LookupEnv("PAGER"); ok {
		return strings.TrimSpace(p), nil
	}
	if _, err := exec.LookPath("less"); err != nil {
		return "", nil
	}
	if _, ok := os.LookupEnv("LESS"); !ok {
		env = []string{"LESS=FRX"}
	}
	return "less", env
}

// page shows text through the pager, on the terminal of standard output.
func (r *REPL) page(text []byte) error {
	cmd, env := pagerCommand()
	if cmd == "" || cmd == "cat" {
		_, err := r.stdout.Write(text)
		return err
	}
	c := exec.Command("/bin/sh", "-c", cmd)
	c.Stdin = bytes.NewReader(text)
	c.Stdout, c.Stderr = r.stdout, r.stderr
	c.Env = append(os.Environ(), env...)
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}
