package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flowq/flowq/index"
)

// newFlagSet is a command's flag set: its errors and -h print on stderr,
// after the command's usage text.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags given anywhere among the arguments and returns
// the other arguments. When ok is false the command ends with code: 0
// after -h, 2 after a bad flag (the flag package has said why).
func parseArgs(fs *flag.FlagSet, args []string) (rest []string, code int, ok bool) {
	rest, err := parseInterleaved(fs, args)
	switch {
	case err == nil:
		return rest, 0, true
	case errors.Is(err, flag.ErrHelp):
		return nil, 0, false
	}
	return nil, 2, false
}

// usageFailer returns the usage-error reporter of a command: it prints
// "flowq CMD: message" on stderr and returns 2, the exit status of a
// usage error.
func usageFailer(stderr io.Writer, cmd string) func(format string, a ...any) int {
	return func(format string, a ...any) int {
		fmt.Fprintf(stderr, "flowq "+cmd+": "+format+"\n", a...)
		return 2
	}
}

// parseInterleaved parses flags that may come before or after the
// positional arguments ("flowq inspect file.json --format json").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

const envIndex = "FLOWQ_INDEX"

// dataDir is flowq's directory for the default index, the demo's index
// and the REPL's history: $XDG_DATA_HOME/flowq, else
// ~/.local/share/flowq.
func dataDir(lookupEnv func(string) (string, bool)) (string, error) {
	if v, ok := lookupEnv("XDG_DATA_HOME"); ok && v != "" {
		return filepath.Join(v, "flowq"), nil
	}
	home, ok := lookupEnv("HOME")
	if !ok || home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("no data directory: set HOME or XDG_DATA_HOME")
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "flowq"), nil
}

// indexDir is where the index lives: --index, else $FLOWQ_INDEX, else
// the data directory's index.
func indexDir(flagVal string, lookupEnv func(string) (string, bool)) (string, error) {
	if flagVal != "" {
		return flagVal, nil
	}
	if v, ok := lookupEnv(envIndex); ok && v != "" {
		return v, nil
	}
	d, err := dataDir(lookupEnv)
	if err != nil {
		return "", fmt.Errorf("%v; or give --index DIR or set %s", err, envIndex)
	}
	return filepath.Join(d, "index"), nil
}

const indexFlagHelp = "index directory (env " + envIndex + "; default $XDG_DATA_HOME/flowq/index or ~/.local/share/flowq/index)"

// openIndex opens the index at path for writing, creating it when missing.
// Another process holding it is a runtime failure that names the holder.
func openIndex(path string) (*index.Index, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, err
	}
	ix, err := index.Open(path)
	var held *index.LockedError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("%w: it must end before this command can write the index; meanwhile query, run, export, verify and draw can read it", err)
	}
	return ix, err
}

// openReading opens the index at path read-only. When another process
// holds it for writing, it reads a snapshot of it instead (the index's
// last committed state), and says so on stderr as cmd (flowq query).
func openReading(path, cmd string, stderr io.Writer) (*index.Index, error) {
	ix, err := index.OpenReadOnly(path)
	var held *index.LockedError
	if !errors.As(err, &held) {
		return ix, err
	}
	if ix, err = index.OpenSnapshot(path); err != nil {
		return nil, fmt.Errorf("%v, and %w", held, err)
	}
	fmt.Fprintf(stderr, "%s: %v: reading a snapshot of it (writes after now are not seen)\n", cmd, held)
	return ix, nil
}
