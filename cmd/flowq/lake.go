package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/index/lake"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// hasFlag reports whether args set the flag name (-name, --name, -name=v,
// --name=v), before a "--".
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// flagValue is the value args give the flag name ("" when not set).
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			return ""
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

const lakeIngestUsage = `usage: flowq ingest --lake DIR [--range-size N] [--shard i/n] [flags] FILE|DIR...
       flowq ingest --lake DIR --rpc URL --blocks A..B [--mode MODE] [--range-size N] [--shard i/n] [flags]

Decodes and analyses the inputs on all cores and writes them as a Parquet
lake: one file per aligned range of --range-size blocks, DIR/chain=NAME/
blocks-FIRST-LAST.parquet (NAME the --chain's name: ethereum, arbitrum...),
each written to a temporary file, synced and renamed, so a range is done
when its file exists and a rerun replaces it whole. --shard i/n writes only
the ranges whose index (FIRST / range size) is i modulo n: n workers, on as
many machines, write disjoint files with no coordinator. With files every
worker reads every input and keeps its ranges' transactions; with --rpc it
fetches only its ranges' blocks, one range at a time, and a range whose
blocks did not all arrive is not written (run again). A range at an edge of
--blocks holds only the blocks asked for. Transactions without a block
number are counted and left out. No Badger index is opened.

Exit status: 0 when nothing failed, 1 when an input or a transaction failed
or a range was not written, 2 for a usage error.

flags:
`

// lakeIngestCmd is `flowq ingest --lake DIR`.
func lakeIngestCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("ingest", lakeIngestUsage, stderr)
	var cf chainFlags
	cf.register(fs)
	dir := fs.String("lake", "", "the lake's directory")
	size := fs.Uint64("range-size", lake.DefaultRangeSize, "blocks per range file (ranges are aligned on multiples of it)")
	shardText := fs.String("shard", "", "i/n: write only the ranges whose index is i modulo n")
	workers := fs.Int("workers", 0, "decoding and analysing goroutines (default: the number of CPUs)")
	quiet := fs.Bool("quiet", false, "no failure lines (only the summary)")
	maxBytes := fs.Int("max-bytes", trace.DefaultMaxBytes, "largest input in bytes (negative: no limit)")
	maxDepth := fs.Int("max-depth", 1025, "deepest call nesting below the top frame (at most the EVM's 1025)")
	maxTransfers := fs.Int("max-transfers", trace.DefaultMaxTransfers, "most transfers in one transaction (negative: no limit)")
	defRPC, _ := lookupEnv("FLOWQ_RPC")
	rpcURL := fs.String("rpc", defRPC, "with --blocks: the node to fetch from (env FLOWQ_RPC)")
	blocks := fs.String("blocks", "", "with --rpc: the inclusive block range A..B (or one block)")
	mode := fs.String("mode", "geth", "with --blocks: geth, flat, parity, or receipts, as 'flowq fetch'")
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "ingest")
	if *dir == "" {
		return usageErr("--lake needs a directory")
	}
	var shard lake.Shard
	if *shardText != "" {
		s, err := lake.ParseShard(*shardText)
		if err != nil {
			return usageErr("--shard: %v", err)
		}
		shard = s
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	chain, err := chainName(cf, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	l := lake.Layout{Dir: *dir, Chain: chain, RangeSize: *size}
	if err := l.Check(); err != nil {
		return usageErr("%v", err)
	}
	switch {
	case *blocks != "" && len(paths) > 0:
		return usageErr("--blocks takes no files")
	case *blocks != "" && *rpcURL == "":
		return usageErr("--blocks needs --rpc URL (or FLOWQ_RPC)")
	case *blocks == "" && len(paths) == 0:
		return usageErr("give the files or directories to ingest (or --rpc URL --blocks A..B)")
	}
	fmode, err := fetch.ParseMode(*mode)
	if err != nil {
		return usageErr("%v", err)
	}
	opt := lake.IngestOptions{Config: cfg, Workers: *workers, Shard: shard,
		MaxBytes: *maxBytes, MaxDepth: *maxDepth, MaxTransfers: *maxTransfers}
	shown := 0
	if !*quiet {
		opt.OnFailure = func(f lake.Failure) {
			if shown++; shown <= 20 {
				fmt.Fprintf(stderr, "flowq ingest: %v\n", f)
			}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var sum lake.Summary
	missing := 0
	if *blocks == "" {
		inputs, err := ingest.Files(paths...)
		if err != nil {
			return usageErr("%v", err)
		}
		srcs := make([]lake.Source, len(inputs))
		for i, in := range inputs {
			srcs[i] = lake.Source{Name: in.Name, Load: in.Load}
		}
		sum, err = lake.Ingest(ctx, l, srcs, opt)
		if err != nil {
			return lakeFail(stderr, "ingest", err)
		}
	} else {
		from, to, err := fetch.ParseRange(*blocks)
		if err != nil {
			return usageErr("%v", err)
		}
		if to > lake.MaxBlock {
			return usageErr("--blocks %s: a lake names blocks up to %d", *blocks, uint64(lake.MaxBlock))
		}
		c, err := fetch.Dial(ctx, *rpcURL, fetch.Options{Mode: fmode, MaxResponseBytes: *maxBytes})
		if err != nil {
			return lakeFail(stderr, "ingest", err)
		}
		defer c.Close()
		for _, r := range l.Ranges(from, to) {
			if !shard.Has(l, r) {
				continue
			}
			a, b := max(from, r.First), min(to, r.Last)
			var srcs []lake.Source
			err := c.Blocks(ctx, a, b, func(n uint64, bundle []byte) error {
				srcs = append(srcs, lake.Source{Name: fmt.Sprintf("rpc:block:%d", n), Load: func(int) ([]byte, error) { return bundle, nil }})
				return nil
			})
			if err != nil {
				if ctx.Err() != nil {
					return lakeFail(stderr, "ingest", ctx.Err())
				}
				missing++
				fmt.Fprintf(stderr, "flowq ingest: blocks %d..%d not written: %v\n", a, b, err)
				continue
			}
			rows, err := lake.Analyse(ctx, l, srcs, opt, &sum)
			if err == nil {
				if len(rows) == 0 { // an empty range still gets its file: it is done
					rows = map[lake.Range][]lake.Row{r: nil}
				}
				err = lake.WriteRows(ctx, l, rows, opt.Write, &sum)
			}
			if err != nil {
				return lakeFail(stderr, "ingest", err)
			}
			if a != r.First || b != r.Last {
				fmt.Fprintf(stderr, "flowq ingest: %s holds blocks %d..%d only (--blocks does not cover the range whole)\n", lake.FileName(r), a, b)
			}
		}
	}
	if shown > 20 {
		fmt.Fprintf(stderr, "flowq ingest: ... %d more failures\n", shown-20)
	}
	fmt.Fprintf(stderr, "flowq ingest: %s into %s\n", sum, l.ChainDir())
	if sum.Failed > 0 || missing > 0 {
		return 1
	}
	return 0
}

// chainName is the lake's chain partition: the name of the --chain (or
// FLOWQ_CHAIN) network.
func chainName(cf chainFlags, lookupEnv func(string) (string, bool)) (string, error) {
	name := cf.chain
	if name == "" {
		name, _ = lookupEnv(envChain)
	}
	if name == "" {
		name = "ethereum"
	}
	n, err := normalform.NetworkByName(name)
	if err != nil {
		return "", err
	}
	return n.Name, nil
}

func lakeFail(stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "flowq %s: interrupted; the ranges written are whole, run the same command again for the others\n", cmd)
		return 1
	}
	fmt.Fprintf(stderr, "flowq %s: %v\n", cmd, err)
	return 1
}

const lakeExportUsage = `usage: flowq export --format parquet --lake DIR [--index DIR] [--chain NAME] [--range-size N] [--shard i/n] [--blocks A..B]

Writes the index's transactions as a Parquet lake (as 'flowq ingest
--lake'): one file per aligned range of --range-size blocks under
DIR/chain=NAME/, each written whole and renamed into place. Transactions
without a block number are counted and left out.

flags:
`

// lakeExportCmd is `flowq export --format parquet --lake DIR`.
func lakeExportCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("export", lakeExportUsage, stderr)
	var cf chainFlags
	cf.register(fs)
	idx := fs.String("index", "", indexFlagHelp)
	format := fs.String("format", "parquet", "parquet")
	dir := fs.String("lake", "", "the lake's directory")
	size := fs.Uint64("range-size", lake.DefaultRangeSize, "blocks per range file")
	shardText := fs.String("shard", "", "i/n: write only the ranges whose index is i modulo n")
	blocks := fs.String("blocks", "", "only this inclusive block range A..B (or one block)")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "export")
	if len(rest) > 0 {
		return usageErr("unexpected argument %q", rest[0])
	}
	if *format != "parquet" {
		return usageErr("--lake writes --format parquet (csv and jsonl go to --out)")
	}
	if *dir == "" {
		return usageErr("--format parquet needs --lake DIR")
	}
	var shard lake.Shard
	if *shardText != "" {
		s, err := lake.ParseShard(*shardText)
		if err != nil {
			return usageErr("--shard: %v", err)
		}
		shard = s
	}
	chain, err := chainName(cf, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	l := lake.Layout{Dir: *dir, Chain: chain, RangeSize: *size}
	if err := l.Check(); err != nil {
		return usageErr("%v", err)
	}
	rng := index.AllBlocks
	if *blocks != "" {
		if rng, err = parseBlocks(*blocks); err != nil {
			return usageErr("%v", err)
		}
	}
	path, err := indexDir(*idx, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	ix, err := openReading(path, "flowq export", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "flowq export: %v\n", err)
		return 1
	}
	defer ix.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sum, err := exportLake(ctx, ix, l, shard, rng)
	if err != nil {
		return lakeFail(stderr, "export", err)
	}
	fmt.Fprintf(stderr, "flowq export: %s from %s\n", sum, path)
	return 0
}

// exportLake writes the index's records as range files, one range at a
// time (Records gives them in block order).
func exportLake(ctx context.Context, ix *index.Index, l lake.Layout, shard lake.Shard, blocks index.BlockRange) (lake.Summary, error) {
	var sum lake.Summary
	var cur lake.Range
	var rows []lake.Row
	have := false
	flush := func() error {
		if !have {
			return nil
		}
		have = false
		return lake.WriteRows(ctx, l, map[lake.Range][]lake.Row{cur: rows}, lake.WriteOptions{}, &sum)
	}
	err := ix.Records(ctx, blocks, func(r *index.Record) error {
		if r.Loc.Block == index.UnknownBlock || r.Loc.Block > lake.MaxBlock {
			sum.Unplaced++
			return nil
		}
		rg := l.RangeOf(r.Loc.Block)
		if !shard.Has(l, rg) {
			sum.Outside++
			return nil
		}
		if !have || rg != cur {
			if err := flush(); err != nil {
				return err
			}
			cur, rows, have = rg, nil, true
		}
		row, err := recordRow(l.Chain, r)
		if err != nil {
			return err
		}
		rows = append(rows, row)
		return nil
	})
	if err == nil {
		err = flush()
	}
	return sum, err
}

// recordRow is the lake row of an index record: the same row as
// lake.FromAnalysis gives for the analysis the record was made from.
func recordRow(chain string, r *index.Record) (lake.Row, error) {
	row := lake.Row{Chain: chain, Block: r.Loc.Block, TxHash: r.Hash.Hex(), Bot: normalform.AddrKey(r.Recipient), Status: r.Status.String(),
		Verdict: r.Verdict.String(), Tier: r.Tier.String(), Path: r.Path.String(), Mode: r.Mode.String(),
		CostsKnown: r.CostsKnown, GasUsed: r.GasUsed, Costs: r.Costs.Dec(),
		Cycles: int32(r.Counts.Cycles), Pools: int32(r.Counts.Pools), Hops: int32(r.Counts.Hops), Leftovers: int32(r.Counts.Leftovers),
		HashExact: r.Hashes.Exact.Hex(), HashShape: r.Hashes.Shape.Hex(), HashTokens: r.Hashes.Tokens.Hex(), HashFamily: r.Hashes.Family.Hex(),
		AlgebraVersion: int32(r.AlgebraVersion), NF: r.NF}
	if r.Loc.Known() {
		i := r.Loc.Index
		row.TxIndex = &i
	}
	if r.HasFrom {
		f := normalform.AddrKey(r.From)
		row.From = &f
	}
	if r.HasTo {
		t := normalform.AddrKey(r.To)
		row.To = &t
	}
	for _, x := range r.Reasons {
		row.Reasons = append(row.Reasons, string(x))
	}
	conv := func(as []index.Amount) []lake.Amount {
		d := make(normalform.Delta, len(as))
		for i, a := range as {
			d[i] = normalform.DeltaEntry{Token: a.Token, Amount: a.Amount}
		}
		return lake.Amounts(d)
	}
	row.Gross = conv(r.Gross)
	if r.CostsKnown {
		row.Net = conv(r.Net)
	}
	taddrs := map[normalform.Address]bool{}
	for _, t := range r.Tokens {
		row.Tokens = append(row.Tokens, t.Key())
		taddrs[t.Addr] = true
	}
	sort.Strings(row.Tokens)
	row.TokenAddresses = lake.SortedAddresses(taddrs)
	addrs := map[normalform.Address]bool{}
	for _, a := range r.Addresses {
		addrs[a] = true
	}
	row.Addresses = lake.SortedAddresses(addrs)
	a, err := r.Analysis()
	if err != nil {
		return row, fmt.Errorf("tx %s: normal form: %w", r.Hash.Hex(), err)
	}
	row.FlashLoan = lake.HasFlashLoan(a)
	return row, nil
}
