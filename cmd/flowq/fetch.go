package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/normalform/trace"
)

const fetchUsage = `usage: flowq fetch --rpc URL (--blocks A..B | --tx HASH...) --out DIR [flags]

Fetches traces, receipts and block headers from a node over JSON-RPC and
saves one bundle per block (DIR/block-N.json) or per transaction
(DIR/tx-HASH.json), for 'flowq inspect DIR' to read offline.

  --mode geth     debug_traceBlockByNumber / debug_traceTransaction with
                  callTracer and withLog (go-ethereum, Erigon, Reth, ...)
  --mode flat     the same calls with geth's flatCallTracer (Parity shape)
  --mode parity   trace_block / trace_transaction (Erigon, Reth, Nethermind)
  --mode receipts no trace: eth_getBlockReceipts (eth_getLogs by block when
                  the node lacks it) and the block with its transactions,
                  for receipts-only analysis (any node)

Requests are batched, run --concurrency at a time, and retried with
backoff on timeouts, truncated answers, HTTP 429 and 5xx; a refused
connection is retried only once the node has answered. Every answer is
bounded (--max-bytes) and checked against what was asked (the block's
number, its receipts' and traces' block and transactions); a block the
node answers wrongly, or without its trace, is an error and no file is
written for it. Errors show the node URL with its credentials and keys
replaced by ***. A progress bar goes to stderr.

flags:
`

// fetchCmd is `flowq fetch`.
func fetchCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("fetch", fetchUsage, stderr)
	defRPC, _ := lookupEnv("FLOWQ_RPC")
	rpcURL := fs.String("rpc", defRPC, "node JSON-RPC URL (environment FLOWQ_RPC)")
	blocks := fs.String("blocks", "", "inclusive block range A..B (or one block)")
	var txs []string
	fs.Func("tx", "a transaction hash (repeatable)", func(s string) error {
		txs = append(txs, strings.TrimSpace(s))
		return nil
	})
	out := fs.String("out", "", "output directory (created if missing)")
	mode := fs.String("mode", "geth", "trace source: geth, flat, parity, or receipts (no trace)")
	conc := fs.Int("concurrency", 4, "requests in flight")
	batch := fs.Int("batch", 1, "blocks per JSON-RPC batch")
	retries := fs.Int("retries", 5, "retries of a transient failure (0: none)")
	timeout := fs.Duration("timeout", 2*time.Minute, "time limit of one request")
	maxBytes := fs.Int("max-bytes", trace.DefaultMaxBytes, "largest answer of the node, in bytes: one over it is refused, not retried (negative: no limit)")
	stall := fs.Duration("stall-timeout", 15*time.Second, "an answer with a Content-Length that stops arriving this long is truncated: retried")
	quiet := fs.Bool("quiet", false, "no progress bar")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	txs = append(txs, rest...) // hashes may also be given as arguments
	usageErr := usageFailer(stderr, "fetch")
	if *rpcURL == "" {
		return usageErr("--rpc URL is required (or set FLOWQ_RPC)")
	}
	if *out == "" {
		return usageErr("--out DIR is required")
	}
	if (*blocks == "") == (len(txs) == 0) {
		return usageErr("give --blocks A..B or transaction hashes (--tx), not both")
	}
	m, err := fetch.ParseMode(*mode)
	if err != nil {
		return usageErr("%v", err)
	}
	hashes, err := parseHashes(txs)
	if err != nil {
		return usageErr("%v", err)
	}
	var from, to uint64
	if *blocks != "" {
		if from, to, err = fetch.ParseRange(*blocks); err != nil {
			return usageErr("%v", err)
		}
	}
	r := *retries
	if r == 0 {
		r = -1
	}
	opt := fetch.Options{Mode: m, Concurrency: *conc, BatchSize: *batch, Retries: r, Timeout: *timeout,
		MaxResponseBytes: *maxBytes, StallTimeout: *stall}
	if err := opt.Check(); err != nil {
		return usageErr("--%v", err)
	}
	if !*quiet {
		opt.Progress = stderr
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "flowq fetch: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := fetch.Dial(ctx, *rpcURL, opt)
	if err != nil {
		fmt.Fprintf(stderr, "flowq fetch: %v\n", err)
		return 1
	}
	defer c.Close()
	start := time.Now()
	n := 0
	if len(hashes) > 0 {
		bundles, err := c.Txs(ctx, hashes)
		if err != nil {
			fmt.Fprintf(stderr, "flowq fetch: %v\n", err)
			return 1
		}
		for i, b := range bundles {
			if err := writeFileAtomic(filepath.Join(*out, "tx-"+strings.ToLower(hashes[i].Hex())+".json"), b); err != nil {
				fmt.Fprintf(stderr, "flowq fetch: %v\n", err)
				return 1
			}
			n++
		}
	} else {
		err = c.Blocks(ctx, from, to, func(num uint64, b []byte) error {
			n++
			return writeFileAtomic(filepath.Join(*out, fmt.Sprintf("block-%d.json", num)), b)
		})
		if err != nil {
			fmt.Fprintf(stderr, "flowq fetch: %v (%d files written)\n", err, n)
			return 1
		}
	}
	fmt.Fprintf(stderr, "flowq fetch: %d files written to %s in %s\n", n, *out, time.Since(start).Round(time.Millisecond))
	return 0
}

func parseHashes(ss []string) ([]common.Hash, error) {
	var out []common.Hash
	for _, s := range ss {
		h := strings.TrimPrefix(strings.ToLower(s), "0x")
		if len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("%q is not a transaction hash (0x and 64 hex digits)", s)
		}
		out = append(out, common.HexToHash(h))
	}
	return out, nil
}

// writeFileAtomic writes through a temporary file, so that an interrupted
// fetch never leaves a truncated bundle behind.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// fetchTxBundles fetches the bundles (trace, receipt, block header) of the
// given transactions from the node at url, in the geth shape (callTracer
// with logs), for `flowq inspect --rpc URL TXHASH`: each bundle is what
// trace.Decode reads. Errors name the method and the transaction.
func fetchTxBundles(ctx context.Context, url string, hashes []string) ([][]byte, error) {
	return fetchTxBundlesMode(ctx, url, hashes, fetch.Options{})
}

// fetchTxBundlesMode is fetchTxBundles with options (mode, retries,
// progress).
func fetchTxBundlesMode(ctx context.Context, url string, hashes []string, opt fetch.Options) ([][]byte, error) {
	hs, err := parseHashes(hashes)
	if err != nil {
		return nil, err
	}
	c, err := fetch.Dial(ctx, url, opt)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Txs(ctx, hs)
}
