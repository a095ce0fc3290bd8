package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/export"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform/trace"
	"github.com/flowq/flowq/repl/serve"
)

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return readline.IsTerminal(int(f.Fd())) // a character device is not enough: /dev/null is one
}

const ingestUsage = `usage: flowq ingest [flags] FILE|DIR...
       flowq ingest --rpc URL --blocks A..B [--mode MODE] [--confirm traces] [flags]
       flowq ingest --retry-failed [flags]
       flowq ingest --failures [--index DIR]
       flowq ingest --lake DIR [--range-size N] [--shard i/n] ... (a Parquet lake: flowq ingest --lake DIR -h)

Decodes and analyses every transaction of the inputs (bundle files, or
every *.json under a directory) on all cores and stores each one's record,
normal form and secondary keys in the index. An input already ingested
with the same content and configuration is skipped, so an interrupted
ingest resumes where it stopped when run again. Failures (inputs that do
not read or decode, transactions the engine cannot analyse) are recorded
with their error: --failures lists them, --retry-failed ingests those
inputs again (a block failed in receipts mode is fetched again in
receipts mode). A directory may hold cryo's Parquet datasets
(NETWORK__logs__A_to_B.parquet with the transactions and blocks, and
traces when there are, of the same range): each range is an input.

--max-bytes holds on the bytes read, whatever stat says: a file named on
the command line is read up to the limit even when it is a pipe or a
device (/dev/stdin works); a *.json found in a directory is read only when
it is a regular file (or a link to one): a named pipe, a device or a socket
there is recorded as a failure saying what it is, not read.

--rpc URL --blocks A..B fetches the blocks from the node and ingests them
(each the input rpc:block:N, or rpc:receipts:block:N in receipts mode;
blocks already ingested are not fetched again, and a block ingested from
receipts is fetched again by a traced mode), --mode, --concurrency,
--retries, --timeout and --stall-timeout as 'flowq fetch', --rpc-batch as
its --batch (blocks per JSON-RPC batch). With --mode receipts, --confirm traces
screens: every block is analysed from receipts, and only the suspects
(a cycle or a detection, a V4 PoolManager, or a coalition that lost no
token while a token moved) are traced (debug_traceTransaction; --confirm
flat or parity for the other tracers), their traced records replacing
the receipts ones. It goes 50 blocks at a time, each window's suspects
traced with the receipts and headers its screening fetched (only their
traces are fetched); a block screened by an earlier run has its
suspects' receipts fetched again. The summary says how many were
screened, confirmed and changed (verdict differs).

Exit status: 0 when nothing failed, 1 when failures were recorded or the
ingest was interrupted, 2 for a usage error.

flags:
`

// ingestCmd is `flowq ingest`.
func ingestCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	if hasFlag(args, "lake") {
		return lakeIngestCmd(args, stdout, stderr, lookupEnv) // lake.go
	}
	fs := newFlagSet("ingest", ingestUsage, stderr)
	var cf chainFlags
	cf.register(fs)
	dir := fs.String("index", "", indexFlagHelp)
	workers := fs.Int("workers", 0, "decoding and analysing goroutines (default: the number of CPUs)")
	batch := fs.Int("batch", 256, "transactions per write")
	force := fs.Bool("force", false, "ingest every input, even those already ingested")
	retry := fs.Bool("retry-failed", false, "ingest again the inputs with recorded failures")
	list := fs.Bool("failures", false, "list the recorded failures and exit")
	progress := fs.Bool("progress", false, "draw a progress bar on stderr even when it is not a terminal")
	quiet := fs.Bool("quiet", false, "no progress bar, no failure lines (only the summary)")
	maxBytes := fs.Int("max-bytes", trace.DefaultMaxBytes, "largest input in bytes, counted as read: a file, a pipe or device named, or a node's answer with --rpc (negative: no limit)")
	maxDepth := fs.Int("max-depth", 1025, "deepest call nesting below the top frame (at most the EVM's 1025)")
	maxTransfers := fs.Int("max-transfers", trace.DefaultMaxTransfers, "most transfers in one transaction (negative: no limit)")
	defRPC, _ := lookupEnv("FLOWQ_RPC")
	rpcURL := fs.String("rpc", defRPC, "with --blocks: the node to fetch from; with --retry-failed: the node to fetch failed rpc:block:N and rpc:tx:HASH inputs from again (env FLOWQ_RPC)")
	blocks := fs.String("blocks", "", "with --rpc: fetch this inclusive block range A..B (or one block) and ingest it")
	mode := fs.String("mode", "geth", "with --blocks: geth, flat, parity, or receipts (no trace), as 'flowq fetch'")
	confirm := fs.String("confirm", "", "with --mode receipts: trace the transactions whose receipts-only analysis finds a cycle or a detection (traces = geth, flat or parity)")
	var rf rpcFlags
	rf.register(fs)
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "ingest")
	if err := (&ingest.Options{Workers: *workers, BatchTxs: *batch}).Check(); err != nil {
		return usageErr("--%v", err)
	}
	if (*retry || *list) && len(paths) > 0 {
		return usageErr("--retry-failed and --failures take no inputs")
	}
	bm, err := blocksMode(fs, *blocks, *mode, *confirm, *rpcURL, *retry || *list, len(paths) > 0)
	if err != nil {
		return usageErr("%v", err)
	}
	if f := setRPCFlag(fs); f != "" && (*rpcURL == "" || (*blocks == "" && !*retry)) {
		return usageErr("--%s goes with --rpc URL and --blocks or --retry-failed", f)
	}
	fo, err := rf.options(bm.mode, *maxBytes)
	if err != nil {
		return usageErr("%v", err)
	}
	if !*retry && !*list && len(paths) == 0 && *blocks == "" {
		return usageErr("give the files or directories to ingest (or --rpc URL --blocks A..B, or --retry-failed)")
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	path, err := indexDir(*dir, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	var inputs []ingest.Input
	if !*retry && !*list && *blocks == "" {
		if inputs, err = ingest.Files(paths...); err != nil {
			return usageErr("%v", err)
		}
	}
	if c := serverFor(path, "flowq ingest", stderr, lookupEnv); c != nil {
		if f := setRPCFlag(fs); f != "" {
			return usageErr("--%s is not sent to the flowq serve holding %s: stop it, or leave the flag out", f, path)
		}
		req := serve.IngestRequest{RPC: *rpcURL, Blocks: *blocks, Mode: *mode, Confirm: *confirm, RetryFailed: *retry,
			Force: *force, Workers: *workers, Batch: *batch, MaxBytes: *maxBytes, MaxDepth: *maxDepth, MaxTransfers: *maxTransfers}
		if *blocks == "" {
			req.Mode = ""
		}
		if !*retry && *blocks == "" {
			req.RPC = ""
		}
		for _, p := range paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				return usageErr("%v", err)
			}
			req.Paths = append(req.Paths, abs)
		}
		return ingestRemote(c, req, *list, !*quiet && (*progress || isTerminal(stderr)), *quiet, stdout, stderr)
	}
	var ix *index.Index
	if *list {
		ix, err = openReading(path, "flowq ingest", stderr) // listing writes nothing: it works on a full disk, and beside a reader
	} else {
		ix, err = openIndex(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowq ingest: %v\n", err)
		return 1
	}
	defer ix.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if *list {
		n := 0
		err := ix.Failures(ctx, func(f index.Failure) error {
			n++
			_, err := fmt.Fprintln(stdout, f)
			return err
		})
		if err != nil {
			fmt.Fprintf(stderr, "flowq ingest: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "flowq ingest: %d failures recorded in %s\n", n, path)
		return 0
	}

	opt := ingest.Options{Config: cfg, Workers: *workers, BatchTxs: *batch, Force: *force,
		MaxBytes: *maxBytes, MaxDepth: *maxDepth, MaxTransfers: *maxTransfers}
	if !*quiet && (*progress || isTerminal(stderr)) {
		opt.Progress = stderr
	}
	shown := 0
	const maxShown = 20
	if !*quiet {
		opt.OnFailure = func(f index.Failure) {
			if shown++; shown <= maxShown {
				if opt.Progress != nil {
					fmt.Fprint(stderr, "\r\033[K")
				}
				fmt.Fprintf(stderr, "flowq ingest: %v\n", f)
			}
		}
	}
	var sum ingest.Summary
	incomplete := false
	switch {
	case *blocks != "":
		var text string
		sum, text, incomplete, err = ingestBlocks(ctx, *rpcURL, bm, fo, ix, opt)
		if text != "" {
			fmt.Fprintf(stderr, "flowq ingest: %s\n", text)
		}
	case *retry && *rpcURL != "":
		fo.Mode = fetch.Geth // rpc:receipts:block:N inputs are fetched in receipts mode
		c, derr := fetch.Dial(ctx, *rpcURL, fo)
		if derr != nil {
			fmt.Fprintf(stderr, "flowq ingest: %v\n", derr)
			return 1
		}
		defer c.Close()
		sum, err = c.RetryFailed(ctx, ix, opt)
	case *retry:
		sum, err = ingest.RetryFailed(ctx, ix, opt, nil)
	default:
		sum, err = ingest.Ingest(ctx, ix, inputs, opt)
	}
	if shown > maxShown {
		fmt.Fprintf(stderr, "flowq ingest: ... %d more failures ('flowq ingest --failures' lists them all)\n", shown-maxShown)
	}
	if *blocks == "" {
		fmt.Fprintf(stderr, "flowq ingest: %s into %s\n", sum, path)
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "flowq ingest: interrupted; run the same command again to resume")
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "flowq ingest: %v\n", err)
		return 1
	case sum.Failed > 0 || incomplete:
		return 1
	}
	return 0
}

// blocksArgs is what --blocks, --mode and --confirm ask for.
type blocksArgs struct {
	from, to      uint64
	mode, confirm fetch.Mode // confirm empty: no confirmation
}

// blocksMode checks --blocks, --mode and --confirm against each other and
// the other arguments.
func blocksMode(fs *flag.FlagSet, blocks, mode, confirm, rpcURL string, retryOrList, paths bool) (blocksArgs, error) {
	var a blocksArgs
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	m, err := fetch.ParseMode(mode)
	if err != nil {
		return a, err
	}
	if set["confirm"] && m != fetch.Receipts {
		return a, fmt.Errorf("--confirm needs --mode receipts: it traces what a receipts-only screening finds")
	}
	if blocks == "" {
		if set["mode"] || set["confirm"] {
			return a, fmt.Errorf("--mode and --confirm go with --rpc URL --blocks A..B")
		}
		return a, nil
	}
	if retryOrList || paths {
		return a, fmt.Errorf("--blocks takes no files and goes without --retry-failed and --failures")
	}
	if rpcURL == "" {
		return a, fmt.Errorf("--blocks needs --rpc URL (or FLOWQ_RPC)")
	}
	if a.from, a.to, err = fetch.ParseRange(blocks); err != nil {
		return a, err
	}
	a.mode = m
	if set["confirm"] {
		c := strings.ToLower(strings.TrimSpace(confirm))
		if c == "traces" {
			c = string(fetch.Geth)
		}
		if a.confirm, err = fetch.ParseMode(c); err != nil || a.confirm == fetch.Receipts {
			return a, fmt.Errorf("--confirm %q: want traces (geth), flat or parity", confirm)
		}
	}
	return a, nil
}

// screenWindow is the blocks screened and confirmed at a time by
// --confirm (0: fetch.DefaultScreenWindow); tests make it small.
var screenWindow = 0

// ingestBlocks fetches a block range into the index and, when asked,
// confirms its receipts-only suspects with traces: then the range is
// screened and confirmed a window of blocks at a time (fetch.ScreenConfirm),
// each window's suspects confirmed with the receipts and headers its
// screening fetched. It returns the ingest's summary (the confirmation's
// added), the report for people, and whether something is missing.
func ingestBlocks(ctx context.Context, url string, a blocksArgs, fo fetch.Options, ix *index.Index, opt ingest.Options) (ingest.Summary, string, bool, error) {
	fo.Mode = a.mode
	c, err := fetch.Dial(ctx, url, fo)
	if err != nil {
		return ingest.Summary{}, "", false, err
	}
	defer c.Close()
	if a.confirm == "" {
		rep, err := c.IngestBlocks(ctx, ix, a.from, a.to, opt)
		text := rep.String() + " into " + ix.Path()
		if err == nil {
			text += nameTokens(ctx, c, ix, opt.Config, a.from, a.to)
		}
		return rep.Summary, text, !rep.Complete(), err
	}
	fo.Mode = a.confirm
	tc, err := fetch.Dial(ctx, url, fo)
	if err != nil {
		return ingest.Summary{}, "", false, err
	}
	defer tc.Close()
	rep, crep, err := fetch.ScreenConfirm(ctx, c, tc, ix, a.from, a.to, screenWindow, opt)
	sum, text := rep.Summary, rep.String()+" into "+ix.Path()
	if err == nil {
		text += nameTokens(ctx, c, ix, opt.Config, a.from, a.to)
	}
	sum.Stored += crep.Stored
	sum.Failed += crep.Failed
	return sum, text + "\n" + crep.String(), !rep.Complete() || len(crep.Missing) > 0 || len(crep.Failures) > 0, err
}

const exportUsage = `usage: flowq export [--index DIR] --format csv|jsonl [--out FILE] [--blocks A..B | --query Q]
       flowq export --format parquet --lake DIR [--range-size N] [--shard i/n] (flowq export --lake DIR -h)

Writes every transaction of the index, in block order, one per line: the
paper's released columns (hash, block, verdict, reasons, cycles,
latency_ms) and flowq's (index, tier, from, to, costs_known, gross, net,
pools, hops, leftovers, and the four structural hashes); the first line
of the CSV names them. With --query, writes the query's rows instead: the
cells of 'flowq query --format csv' (a balance as two columns, its tokens
and its amounts), or its JSON lines.

flags:
`

// exportCmd is `flowq export`.
func exportCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	if hasFlag(args, "lake") || strings.EqualFold(flagValue(args, "format"), "parquet") {
		return lakeExportCmd(args, stdout, stderr, lookupEnv) // lake.go
	}
	fs := newFlagSet("export", exportUsage, stderr)
	dir := fs.String("index", "", indexFlagHelp)
	format := fs.String("format", "csv", "csv or jsonl")
	out := fs.String("out", "", "output file (default: standard output)")
	blocks := fs.String("blocks", "", "only this inclusive block range A..B (or one block)")
	query := fs.String("query", "", "export the rows of this query (`flowq query`'s language) instead of every transaction: the cells of `query --format csv`, or its JSON lines")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "export")
	if len(rest) > 0 {
		return usageErr("unexpected argument %q", rest[0])
	}
	f, err := export.ParseFormat(*format)
	if err != nil {
		return usageErr("%v", err)
	}
	if *query != "" {
		if *blocks != "" {
			return usageErr("--blocks and --query: give the block range in the query (where block in A..B)")
		}
		return exportQuery(*dir, f, *query, *out, stdout, stderr, lookupEnv)
	}
	rng := index.AllBlocks
	if *blocks != "" {
		if rng, err = parseBlocks(*blocks); err != nil {
			return usageErr("%v", err)
		}
	}
	path, err := indexDir(*dir, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	if c := serverFor(path, "flowq export", stderr, lookupEnv); c != nil {
		return exportRemote(c, f, *blocks, *out, stdout, stderr)
	}
	ix, err := openReading(path, "flowq export", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "flowq export: %v\n", err)
		return 1
	}
	defer ix.Close()
	w := stdout
	var file *os.File
	if *out != "" {
		if file, err = os.Create(*out); err != nil {
			fmt.Fprintf(stderr, "flowq export: %v\n", err)
			return 1
		}
		w = file
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	n, err := export.Export(ctx, ix, w, f, rng)
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowq export: %v\n", err)
		return 1
	}
	dest := "standard output"
	if *out != "" {
		dest = *out
	}
	fmt.Fprintf(stderr, "flowq export: %d transactions written to %s\n", n, dest)
	return 0
}

// parseBlocks reads a --blocks range as fetch.ParseRange does (A..B, or
// one block), so that every command and the server read ranges alike.
func parseBlocks(s string) (index.BlockRange, error) {
	from, to, err := fetch.ParseRange(s)
	if err != nil {
		return index.BlockRange{}, fmt.Errorf("--blocks: %w", err)
	}
	return index.Blocks(from, to), nil
}
