package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

const verifyUsage = `usage: flowq verify [--index DIR] [--chain C] [--wrapped-native A,...] [--routers A,...]

Checks the index against its invariants: every record decodes, every
secondary key is one its record implies and no key its record implies is
missing, the transaction-hash keys and the dictionary agree with the
records, and each bot's first-seen key names its first transaction of a
shape. Each block's stored findings (sandwiches, back-runs, builder) are
computed again from its records' normal forms, with the configuration
flags (give those the index was ingested with), and must be equal; a
block whose findings wait to be computed (an ingest stopped before it
could) is reported. Prints the number of transactions and blocks checked;
exits 1 with the problems found (at most ten of each kind). The index is
opened read-only.

flags:
`

// verifyCmd is `flowq verify`.
func verifyCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("verify", verifyUsage, stderr)
	dir := fs.String("index", "", indexFlagHelp)
	var cf chainFlags
	cf.register(fs)
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "verify")
	if len(rest) > 0 {
		return usageErr("unexpected argument %q", rest[0])
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	path, err := indexDir(*dir, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	ix, err := openReading(path, "flowq verify", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "flowq verify: %v\n", err)
		return 1
	}
	defer ix.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	err = ix.Verify(ctx)
	blocks, berr := ix.VerifyBlocks(ctx, cfg)
	if err := errors.Join(err, berr); err != nil {
		fmt.Fprintf(stderr, "flowq verify: %s: %v\n", path, err)
		return 1
	}
	n, err := ix.Count(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "flowq verify: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d transactions, every key consistent with its record; %d blocks, their findings equal to their records' (%v)\n", path, n, blocks, time.Since(start).Round(time.Millisecond))
	return 0
}
