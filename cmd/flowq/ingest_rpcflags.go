package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/flowq/flowq/index/fetch"
)

// rpcFlags are `flowq fetch`'s request flags, for `flowq ingest --rpc`
// (--blocks, --confirm's tracing and --retry-failed's refetching). The
// JSON-RPC batch is --rpc-batch here: ingest's --batch is transactions
// per write.
type rpcFlags struct {
	conc, batch, retries *int
	timeout, stall       *time.Duration
}

func (r *rpcFlags) register(fs *flag.FlagSet) {
	r.conc = fs.Int("concurrency", 4, "with --rpc: requests in flight, as 'flowq fetch'")
	r.batch = fs.Int("rpc-batch", 1, "with --rpc: blocks per JSON-RPC batch ('flowq fetch --batch')")
	r.retries = fs.Int("retries", 5, "with --rpc: retries of a transient failure (0: none)")
	r.timeout = fs.Duration("timeout", 2*time.Minute, "with --rpc: time limit of one request")
	r.stall = fs.Duration("stall-timeout", 15*time.Second, "with --rpc: an answer with a Content-Length that stops arriving this long is truncated: retried")
}

// names of the flags, for the checks of what goes with what.
var rpcFlagNames = []string{"concurrency", "rpc-batch", "retries", "timeout", "stall-timeout"}

// setRPCFlag is the first of the flags set on the command line, or "".
func setRPCFlag(fs *flag.FlagSet) string {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, n := range rpcFlagNames {
		if set[n] {
			return n
		}
	}
	return ""
}

// options are the fetch options the flags ask for, in mode m.
func (r *rpcFlags) options(m fetch.Mode, maxBytes int) (fetch.Options, error) {
	if *r.conc < 1 || *r.batch < 1 || *r.retries < 0 || *r.timeout <= 0 || *r.stall <= 0 {
		return fetch.Options{}, fmt.Errorf("--concurrency and --rpc-batch must be at least 1, --retries at least 0, --timeout and --stall-timeout positive")
	}
	n := *r.retries
	if n == 0 {
		n = -1 // fetch.Options: negative is none, 0 the default
	}
	switch { // fetch.Options.Check's bounds, under these flags' names
	case *r.conc > fetch.MaxConcurrency:
		return fetch.Options{}, fmt.Errorf("--concurrency %d: want 1 to %d requests in flight", *r.conc, fetch.MaxConcurrency)
	case *r.batch > fetch.MaxBatchSize:
		return fetch.Options{}, fmt.Errorf("--rpc-batch %d: want 1 to %d blocks a request", *r.batch, fetch.MaxBatchSize)
	}
	return fetch.Options{Mode: m, Concurrency: *r.conc, BatchSize: *r.batch, Retries: n, Timeout: *r.timeout,
		StallTimeout: *r.stall, MaxResponseBytes: maxBytes}, nil
}
