package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
	"github.com/flowq/flowq/repl"
)

const drawUsage = `usage: flowq draw [--view graph|tree] [--format dot|svg|png] [--out FILE] [--tx HASH] [flags] FILE|-
       flowq draw [--view graph|tree] [--format dot|svg|png] [--out FILE] --index DIR TXHASH

Draws one transaction, as the paper's figures do:

  --view graph   its transfer graph: addresses as nodes (the sender and
                 recipient, pools, token contracts, the coinbase), one edge
                 per transfer numbered in trace order; each arbitrage cycle
                 in its own colour, with its id and gain δ
  --view tree    its reduced tree: the normal form, each cycle boxed with
                 its composition (∘) and parallel arms (∥) down to the
                 transfers, open chains, leftover cycles and leftovers

The transaction comes from a trace file (any shape 'flowq inspect' reads;
"-" is standard input; --tx chooses one of a file's transactions) or, with
--index, from the index (the normal form 'flowq ingest' stored). A bare
transaction hash that is not a file is looked up in the default index.

Output: Graphviz DOT on standard output by default; svg and png are laid
out by Graphviz's dot (apt install graphviz) and need --out FILE or a
standard output that is not a terminal. With --out and no --format, the
file's extension (.dot, .gv, .svg, .png) chooses the format.

Exit status: 0 on success, 1 when the input cannot be read, decoded,
found or drawn, 2 for a usage error.

flags:
`

var drawViews = []string{"graph", "tree"}

// drawCmd is `flowq draw`.
func drawCmd(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("draw", drawUsage, stderr)
	var cf chainFlags
	cf.register(fs)
	view := fs.String("view", "graph", "what to draw: graph (the transfer graph) or tree (the reduced tree, the normal form)")
	format := fs.String("format", "dot", "output: dot (Graphviz text), svg or png (need Graphviz's dot)")
	outPath := fs.String("out", "", "write to this file instead of standard output")
	txFlag := fs.String("tx", "", "the transaction to draw, by hash, when the input holds several")
	dir := fs.String("index", "", "draw from this index (the argument is a transaction hash); "+indexFlagHelp)
	maxBytes := fs.Int("max-bytes", trace.DefaultMaxBytes, "largest input in bytes, a file or standard input (negative: no limit)")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "draw")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "flowq draw: "+format+"\n", a...)
		return 1
	}
	formatSet := false
	fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	if !formatSet && *outPath != "" {
		switch strings.ToLower(filepath.Ext(*outPath)) {
		case ".svg":
			*format = "svg"
		case ".png":
			*format = "png"
		}
	}
	if *view != "graph" && *view != "tree" {
		return usageErr("--view must be %s, not %q", strings.Join(drawViews, " or "), *view)
	}
	if *format != "dot" && *format != "svg" && *format != "png" {
		return usageErr("--format must be dot, svg or png, not %q", *format)
	}
	if len(rest) > 1 {
		return usageErr("draw takes one input (a trace file, - for standard input, or a transaction hash with --index), got %d: %s", len(rest), strings.Join(rest, " "))
	}
	if *format != "dot" && *outPath == "" && isTerminal(stdout) {
		return usageErr("--format %s writes image data: give --out FILE or redirect standard output (or use --format dot)", *format)
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	var only string
	if *txFlag != "" {
		h, err := normalform.ParseHash(strings.TrimSpace(*txFlag))
		if err != nil {
			return usageErr("--tx: %v", err)
		}
		only = strings.ToLower(h.Hex())
	}

	var a *normalform.Analysis
	var dot string // from a server, when one holds the index
	fromIndex := *dir != "" || (len(rest) == 1 && allTxHashes(rest))
	switch {
	case fromIndex:
		hash := only
		if len(rest) == 1 {
			h, err := normalform.ParseHash(rest[0])
			if err != nil {
				return usageErr("with --index, the argument is a transaction hash: %v", err)
			}
			if only != "" && strings.ToLower(h.Hex()) != only {
				return usageErr("--tx %s and the argument %s name different transactions", only, rest[0])
			}
			hash = strings.ToLower(h.Hex())
		}
		if hash == "" {
			return usageErr("with --index, give the transaction hash to draw")
		}
		if dot, err = drawRemote(*dir, hash, *view, lookupEnv, stderr); err != nil {
			return fail("%v", err)
		}
		if dot == "" {
			if a, err = analysisFromIndex(*dir, hash, stderr, lookupEnv); err != nil {
				return fail("%v", err)
			}
		}
	case len(rest) == 0:
		return usageErr("give a trace file (or - for standard input), or --index DIR and a transaction hash")
	default:
		var code int
		if a, code = analysisFromFile(rest[0], only, cfg, *maxBytes, stdin, stderr); a == nil {
			return code
		}
	}

	if a != nil { // else drawn by the server
		dot = repl.DOT(cfg, a, *view)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var img bytes.Buffer
	if err := repl.Picture(ctx, dot, *format, &img); err != nil {
		return fail("%v", err)
	}
	data := img.Bytes()
	if *outPath == "" {
		if _, err := stdout.Write(data); err != nil {
			return fail("writing the %s: %v", *format, err)
		}
		return 0
	}
	if err := os.WriteFile(*outPath, data, 0o644); err != nil {
		return fail("%v", err)
	}
	what := map[string]string{"graph": "transfer graph", "tree": "reduced tree"}[*view]
	if a == nil {
		what += " of tx " + only
		if len(rest) == 1 {
			what = map[string]string{"graph": "transfer graph", "tree": "reduced tree"}[*view] + " of tx " + rest[0]
		}
	} else if a.Tx.Meta.HasHash {
		what += " of tx " + a.Tx.Meta.Hash.Hex()
	}
	fmt.Fprintf(stderr, "flowq draw: %s written to %s (%s)\n", what, *outPath, *format)
	return 0
}

// analysisFromFile decodes a trace file (or standard input for "-") and
// analyses the transaction to draw: the one named by only, or the only one
// the input holds. On failure it reports and returns the exit status.
func analysisFromFile(path, only string, cfg *normalform.Config, maxBytes int, stdin io.Reader, stderr io.Writer) (*normalform.Analysis, int) {
	in := input{name: path, path: path}
	if path == "-" {
		in = input{name: "stdin"}
	} else if st, err := os.Stat(path); err != nil {
		fmt.Fprintf(stderr, "flowq draw: %v\n", err)
		return nil, 1
	} else if st.IsDir() {
		fmt.Fprintf(stderr, "flowq draw: %s is a directory: draw takes one trace file (with --tx to choose a transaction)\n", path)
		return nil, 2
	}
	data, err := in.read(stdin, maxBytes)
	if err != nil {
		fmt.Fprintf(stderr, "flowq draw: %v\n", err)
		return nil, 1
	}
	res := trace.Decode(data, trace.Options{Config: cfg, Source: in.name, MaxBytes: maxBytes})
	var pick []*normalform.Tx
	for _, tx := range res.Txs {
		if only == "" || matches([]string{only}, tx) {
			pick = append(pick, tx)
		}
	}
	switch {
	case len(pick) == 1:
		// Decoding errors of other transactions do not stop the drawing,
		// but they are said.
		for _, e := range res.Errors {
			fmt.Fprintf(stderr, "flowq draw: note: %v\n", e)
		}
	case len(pick) > 1:
		hashes := make([]string, 0, 5)
		for i, tx := range pick {
			if i == 5 {
				hashes = append(hashes, fmt.Sprintf("and %d more", len(pick)-5))
				break
			}
			if tx.Meta.HasHash {
				hashes = append(hashes, tx.Meta.Hash.Hex())
			} else {
				hashes = append(hashes, "(no hash)")
			}
		}
		fmt.Fprintf(stderr, "flowq draw: %s holds %d transactions: choose one with --tx HASH (%s)\n", in.name, len(pick), strings.Join(hashes, ", "))
		return nil, 2
	case only != "":
		fmt.Fprintf(stderr, "flowq draw: %s: no transaction %s (the input decodes to %d transactions", in.name, only, len(res.Txs))
		if len(res.Errors) > 0 {
			fmt.Fprintf(stderr, "; %d failed, first: %v", len(res.Errors), res.Errors[0])
		}
		fmt.Fprintln(stderr, ")")
		return nil, 1
	case len(res.Errors) > 0:
		for _, e := range res.Errors {
			fmt.Fprintf(stderr, "flowq draw: %v\n", e)
		}
		fmt.Fprintf(stderr, "flowq draw: %s: no transaction could be decoded\n", in.name)
		return nil, 1
	default:
		fmt.Fprintf(stderr, "flowq draw: %s holds no transaction (is it a trace? see 'flowq inspect -h' for the shapes read)\n", in.name)
		return nil, 1
	}
	a, err := normalform.Analyze(pick[0], cfg)
	if err != nil {
		fmt.Fprintf(stderr, "flowq draw: %s: %v\n", in.name, err)
		return nil, 1
	}
	return a, 0
}

// analysisFromIndex reads a transaction's record from the index and
// decodes its stored normal form.
func analysisFromIndex(dir, hash string, stderr io.Writer, lookupEnv func(string) (string, bool)) (*normalform.Analysis, error) {
	h, err := normalform.ParseHash(hash)
	if err != nil {
		return nil, err
	}
	path, err := indexDir(dir, lookupEnv)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no index at %s (run 'flowq ingest' first, or give --index DIR): %w", path, err)
	}
	ix, err := openReading(path, "flowq draw", stderr)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	defer ix.Close()
	rec, err := ix.Get(h)
	if errors.Is(err, index.ErrNotFound) {
		return nil, fmt.Errorf("tx %s is not in the index %s: ingest it first (flowq ingest FILE), or draw it from its trace file", h.Hex(), path)
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	a, err := rec.Analysis()
	if err != nil {
		return nil, fmt.Errorf("tx %s: the stored normal form does not decode: %w", h.Hex(), err)
	}
	return a, nil
}
