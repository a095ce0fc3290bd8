package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flowq/flowq/examples"
	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/repl"
)

const demoUsage = `usage: flowq demo [--index DIR] [--format table|json|csv]

Indexes the bundled examples (four mainnet traces and thirty-five scenario
bundles of real contracts run on an in-process EVM; they are embedded in
the binary) and runs the tour, a script of queries that shows each kind of
question flowq answers. The demo index is kept, apart from your own
(default $XDG_DATA_HOME/flowq/demo or ~/.local/share/flowq/demo), so
that you can go on with 'flowq repl --index DIR'. Running the demo again
reuses it: ingest skips what is already there.

flags:
`

// demoDir is the demo's own index: --index, else the data directory's
// demo, beside the default index.
func demoDir(flagVal string, lookupEnv func(string) (string, bool)) (string, error) {
	if flagVal != "" {
		return flagVal, nil
	}
	d, err := dataDir(lookupEnv)
	if err != nil {
		return "", fmt.Errorf("%v; or give --index DIR", err)
	}
	return filepath.Join(d, "demo"), nil
}

// demoCmd is `flowq demo`.
func demoCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("demo", demoUsage, stderr)
	dir := fs.String("index", "", "the demo's index directory (default $XDG_DATA_HOME/flowq/demo or ~/.local/share/flowq/demo)")
	format := fs.String("format", "table", "output: "+strings.Join(repl.Modes, ", "))
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "flowq demo: unexpected argument %q\n", rest[0])
		return 2
	}
	if !slices.Contains(repl.Modes, *format) {
		fmt.Fprintf(stderr, "flowq demo: --format %q: want one of %s\n", *format, strings.Join(repl.Modes, ", "))
		return 2
	}
	path, err := demoDir(*dir, lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "flowq demo: %v\n", err)
		return 2
	}
	ix, err := openIndex(path)
	var old *index.SchemaError
	if errors.As(err, &old) && *dir == "" {
		// The demo's own index holds only the bundled examples: an
		// earlier flowq's is rebuilt, not refused.
		fmt.Fprintf(stderr, "flowq demo: %s was built by an earlier flowq (schema %d); building it again\n", path, old.Schema)
		if err = os.RemoveAll(path); err == nil {
			ix, err = openIndex(path)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowq demo: %v\n", err)
		return 1
	}
	defer ix.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// The bundled examples are read with the default (Ethereum) chain:
	// the mainnet traces are mainnet's, and the scenario chain deploys
	// WETH9 at mainnet's WETH address.
	var cf chainFlags
	cfg, err := cf.config(func(string) (string, bool) { return "", false })
	if err != nil {
		fmt.Fprintf(stderr, "flowq demo: %v\n", err)
		return 1
	}
	sum, err := ingest.Ingest(ctx, ix, examples.Inputs(), ingest.Options{Config: cfg})
	fmt.Fprintf(stderr, "flowq demo: %s into %s\n", sum, path)
	if err != nil {
		fmt.Fprintf(stderr, "flowq demo: %v\n", err)
		return 1
	}
	if sum.Failed > 0 {
		fmt.Fprintf(stderr, "flowq demo: %d bundled examples failed ('flowq ingest --failures --index %s' lists them)\n", sum.Failed, path)
		return 1
	}
	s := &repl.Session{Cfg: cfg, Src: ix, Out: stdout, Mode: *format, Echo: *format == "table"}
	if rc := execReport(ctx, s, "examples/tour.fq", examples.Tour(), stderr, "demo"); rc != 0 {
		return rc
	}
	if *format == "table" {
		fmt.Fprintf(stdout, "\n-- Go on from here:\n--   flowq repl --index %s\n--   flowq query --index %s 'find arbitrages where pools >= 3'\n", path, path)
	}
	return 0
}
