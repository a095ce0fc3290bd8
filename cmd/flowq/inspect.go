package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/normalform/trace"
)

func inspect(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf chainFlags
	cf.register(fs)
	format := fs.String("format", "text", "output format: text (a report per transaction) or json (one object per line)")
	t0 := fs.Bool("t0", false, "decode only: print each transaction's cash flow tree T0 instead of its analysis")
	steps := fs.Bool("steps", false, "include the rewrite log: every rule that fired, its operands and result, then a detect step per detection")
	rpcURL := fs.String("rpc", "", "fetch the transactions named by the arguments (hashes) from this node's JSON-RPC endpoint (or FLOWQ_RPC)")
	byBlock := fs.Bool("block", false, "block analysis: gather the transactions of each block (from every input), in index order, and print per block its swaps, sandwiches, back-runs and builder payments instead of per-transaction reports")
	maxBytes := fs.Int("max-bytes", trace.DefaultMaxBytes, "largest input in bytes: a file, standard input, or one node answer with --rpc (negative: no limit)")
	var only []string
	fs.Func("tx", "only the transaction with this hash (repeatable)", func(s string) error {
		only = append(only, strings.ToLower(strings.TrimSpace(s)))
		return nil
	})
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: flowq inspect [flags] [FILE|DIR|-]...

Reads traces (geth callTracer with logs, Parity trace_* with logs or
receipts, JSON-RPC responses, bundles, blocks) from files, from every
*.json under a directory, or from standard input ("-", or no argument), and
prints each transaction's verdict, profit, cycles and normal form (or, with
--t0, its cash flow tree T0).

Each input is read up to --max-bytes and no further (standard input, a
pipe or a device too); a *.json found in a directory is read only when it
is a regular file, or a link to one.

flags:
`)
		fs.PrintDefaults()
	}
	paths, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "flowq inspect: --format must be text or json, not %q\n", *format)
		return 2
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "flowq inspect: %v\n", err)
		return 2
	}
	if *rpcURL == "" && len(paths) > 0 && allTxHashes(paths) {
		*rpcURL, _ = lookupEnv("FLOWQ_RPC")
		if *rpcURL == "" {
			fmt.Fprintf(stderr, "flowq inspect: %s is a transaction hash, not a file: give --rpc URL (or FLOWQ_RPC) to fetch it from a node\n", paths[0])
			return 2
		}
	}
	var inputs []input
	if *rpcURL != "" {
		if len(paths) == 0 || !allTxHashes(paths) {
			fmt.Fprintf(stderr, "flowq inspect: with --rpc, the arguments are transaction hashes (0x and 64 hex digits)\n")
			return 2
		}
		bundles, err := fetchTxBundlesMode(context.Background(), *rpcURL, paths, fetch.Options{MaxResponseBytes: *maxBytes})
		if err != nil {
			fmt.Fprintf(stderr, "flowq inspect: %v\n", err)
			return 1
		}
		for i, b := range bundles {
			inputs = append(inputs, input{name: "rpc:" + paths[i], data: b})
		}
	} else if inputs, err = expandInputs(paths); err != nil {
		fmt.Fprintf(stderr, "flowq inspect: %v\n", err)
		return 2
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var nTx, nFail, nShown, nSkipped int
	blocks := map[uint64][]*normalform.Analysis{}
	blockTxs := map[uint64]int{} // transactions per block, from the headers given
	// writeJSON writes one JSON line, or counts a failure.
	writeJSON := func(b []byte, err error) {
		if err != nil {
			fmt.Fprintf(stderr, "flowq inspect: %v\n", err)
			nFail++
			return
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	for _, in := range inputs {
		data, err := in.read(stdin, *maxBytes)
		if err != nil {
			fmt.Fprintf(stderr, "flowq inspect: %v\n", err)
			nFail++
			continue
		}
		res := trace.Decode(data, trace.Options{Config: cfg, Source: in.name, MaxBytes: *maxBytes})
		for n, c := range res.BlockTxs {
			blockTxs[n] = c
		}
		if why, skip := notATrace(in, res); skip {
			fmt.Fprintf(stderr, "flowq inspect: %s: skipped: %s\n", in.name, why)
			nSkipped++
			continue
		}
		for _, tx := range res.Txs {
			nTx++
			if len(only) > 0 && !matches(only, tx) {
				continue
			}
			nShown++
			if *t0 {
				if *format == "json" {
					writeJSON(show.MarshalT0(cfg, tx))
				} else {
					out.WriteString(textT0(cfg, tx))
				}
				continue
			}
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				fmt.Fprintf(stderr, "flowq inspect: %s: %v\n", in.name, err)
				nFail++
				continue
			}
			if *byBlock {
				if !tx.Meta.HasBlock || !tx.Meta.HasIndex {
					fmt.Fprintf(stderr, "flowq inspect: %s: tx %s has no block or index: left out of block analysis\n", in.name, tx.Meta.Hash.Hex())
					continue
				}
				blocks[tx.Meta.Block] = append(blocks[tx.Meta.Block], a)
				continue
			}
			if *format == "json" {
				writeJSON(show.MarshalAnalysis(cfg, a, *steps))
			} else {
				out.WriteString(textAnalysis(cfg, a, *steps))
			}
		}
		for _, e := range res.Errors {
			fmt.Fprintf(stderr, "flowq inspect: %v\n", e)
		}
		nFail += len(res.Errors)
	}
	if *byBlock {
		nFail += writeBlocks(out, stderr, cfg, blocks, blockTxs, *format == "json")
	}
	out.Flush()
	if len(only) > 0 && nShown == 0 {
		fmt.Fprintf(stderr, "flowq inspect: no transaction matches --tx %s\n", strings.Join(only, ", "))
		nFail++
	}
	skipped := ""
	if nSkipped > 0 {
		skipped = fmt.Sprintf(", %d files skipped (not traces)", nSkipped)
	}
	fmt.Fprintf(stderr, "flowq inspect: %d transactions decoded, %d failed%s\n", nTx, nFail, skipped)
	if nFail > 0 {
		return 1
	}
	return 0
}

// allTxHashes reports whether every argument is a transaction hash.
func allTxHashes(args []string) bool {
	for _, a := range args {
		if len(a) != 66 || !strings.HasPrefix(strings.ToLower(a), "0x") {
			return false
		}
		if _, err := os.Stat(a); err == nil {
			return false
		}
		for _, c := range a[2:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
	}
	return true
}

func matches(only []string, tx *normalform.Tx) bool {
	if !tx.Meta.HasHash {
		return false
	}
	h := strings.ToLower(tx.Meta.Hash.Hex())
	for _, o := range only {
		if o == h {
			return true
		}
	}
	return false
}

type input struct {
	name  string
	path  string // "" for standard input
	found bool   // found in a directory: read only when it is a regular file
	data  []byte // already fetched
}

// read reads the input, at most max bytes (<= 0: no limit), counted as
// they are read: standard input, a pipe or a device is cut off one byte
// past the limit, whatever its size. Errors name the input.
func (in input) read(stdin io.Reader, max int) ([]byte, error) {
	if in.data != nil {
		return in.data, nil
	}
	var b []byte
	var err error
	switch {
	case in.path == "":
		b, err = ingest.ReadAll(stdin, max)
	case in.found:
		b, err = ingest.ReadRegularFile(in.path, max)
	default:
		b, err = ingest.ReadFile(in.path, max)
	}
	var se *ingest.SizeError
	switch {
	case errors.As(err, &se):
		return nil, fmt.Errorf("%s: %w", in.name, err)
	case err != nil && in.path == "":
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return b, err
}

// expandInputs turns arguments into inputs: "-" or nothing is standard
// input, a directory is every *.json file under it in lexical order (read
// only when it is a regular file, or a link to one: a pipe or a device
// found in a directory is reported, not read).
func expandInputs(args []string) ([]input, error) {
	if len(args) == 0 {
		return []input{{name: "stdin"}}, nil
	}
	var out []input
	for _, a := range args {
		if a == "-" {
			out = append(out, input{name: "stdin"})
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, input{name: a, path: a})
			continue
		}
		found, err := ingest.FindJSON(a)
		if err != nil {
			return nil, err
		}
		for _, p := range found {
			out = append(out, input{name: p, path: p, found: true})
		}
	}
	return out, nil
}

// textAnalysis renders one analysed transaction for people.
func textAnalysis(cfg *normalform.Config, a *normalform.Analysis, steps bool) string {
	var b strings.Builder
	writeHeader(&b, a.Tx)
	show.WriteAnalysis(cfg, &b, a, steps)
	b.WriteByte('\n')
	return b.String()
}

// textT0 renders one decoded transaction for people.
func textT0(cfg *normalform.Config, tx *normalform.Tx) string {
	var b strings.Builder
	writeHeader(&b, tx)
	fmt.Fprintf(&b, "T0: %d call nodes, %d leaves\n", tx.Root.CountFrames(), len(tx.Root.Leaves(nil)))
	show.WriteTree(cfg.ForTx(tx), &b, tx.Root) // the transaction's short forms, as in its report
	b.WriteByte('\n')
	return b.String()
}

// writeHeader renders what the input says of a transaction.
func writeHeader(b *strings.Builder, tx *normalform.Tx) {
	m := &tx.Meta
	b.WriteString("tx ")
	if m.HasHash {
		b.WriteString(m.Hash.Hex())
	} else {
		b.WriteString("(hash unknown)")
	}
	if m.HasBlock {
		fmt.Fprintf(b, "  block %d", m.Block)
	}
	if m.HasIndex {
		fmt.Fprintf(b, "  index %d", m.Index)
	}
	if tx.Mode() == normalform.ModeReceipts {
		b.WriteString("  (receipts only, no trace)\n")
	} else {
		fmt.Fprintf(b, "  (%s trace)\n", tx.Shape)
	}
	fmt.Fprintf(b, "  from %s", normalform.AddrKey(m.From))
	if m.HasTo {
		fmt.Fprintf(b, "  to %s", normalform.AddrKey(m.To))
	}
	fmt.Fprintf(b, "  status %s\n", m.Status)
	if m.HasReceipt {
		fmt.Fprintf(b, "  gas used %d at %s wei", m.GasUsed, m.EffectiveGasPrice.Dec())
		if m.HasHeader && m.HasBaseFee {
			fmt.Fprintf(b, " (base fee %s)", m.BaseFee.Dec())
		}
		if m.HasHeader {
			fmt.Fprintf(b, "  coinbase %s", normalform.AddrKey(m.Miner))
		}
		b.WriteByte('\n')
	} else {
		b.WriteString("  costs unknown: the input has no receipt\n")
	}
	s := tx.Stats
	fmt.Fprintf(b, "  %d transfers from %d frames (%d reverted) and %d logs (%d transfer logs, %d non-standard ignored); %d degenerate dropped\n",
		len(tx.Transfers), s.Frames, s.RevertedFrames, s.Logs, s.TransferLogs, s.IgnoredLogs, s.Degenerate)
	for _, n := range tx.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}

// writeBlocks prints the block analysis of each block, in block order; a
// transaction given twice (same index, same hash) is read once. It returns
// the number of blocks that failed. counts holds the transaction count of
// the blocks whose header the inputs gave (the trailing missing ones are
// then reported too).
func writeBlocks(out io.Writer, stderr io.Writer, cfg *normalform.Config, blocks map[uint64][]*normalform.Analysis, counts map[uint64]int, asJSON bool) int {
	nums := make([]uint64, 0, len(blocks))
	for n := range blocks {
		nums = append(nums, n)
	}
	sort.Slice(nums, func(i, j int) bool { return nums[i] < nums[j] })
	failed := 0
	for _, n := range nums {
		txs := blocks[n]
		sort.SliceStable(txs, func(i, j int) bool { return txs[i].Tx.Meta.Index < txs[j].Tx.Meta.Index })
		uniq := txs[:0]
		for _, a := range txs {
			if k := len(uniq); k > 0 && uniq[k-1].Tx.Meta.Index == a.Tx.Meta.Index && uniq[k-1].Tx.Meta.Hash == a.Tx.Meta.Hash {
				continue
			}
			uniq = append(uniq, a)
		}
		count, ok := counts[n]
		if !ok {
			count = -1
		}
		r, err := block.AnalyzeCount(n, uniq, cfg, count)
		if err != nil {
			fmt.Fprintf(stderr, "flowq inspect: %v\n", err)
			failed++
			continue
		}
		if asJSON {
			b, err := json.Marshal(r)
			if err != nil {
				fmt.Fprintf(stderr, "flowq inspect: block %d: %v\n", n, err)
				failed++
				continue
			}
			out.Write(append(b, '\n'))
		} else {
			io.WriteString(out, r.Text(cfg))
		}
	}
	return failed
}
