package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

const verifyUsage = `usage: flowq verify [--index DIR]

Checks the index against its invariants: every record decodes, every
secondary key is one its record implies and no key its record implies is
missing, the transaction-hash keys and the dictionary agree with the
records, and each bot's first-seen key names its first transaction of a
shape. Prints the number of transactions checked; exits 1 with the
problems found (at most ten). The index is opened read-only.

flags:
`

// verifyCmd is `flowq verify`.
func verifyCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("verify", verifyUsage, stderr)
	dir := fs.String("index", "", indexFlagHelp)
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "verify")
	if len(rest) > 0 {
		return usageErr("unexpected argument %q", rest[0])
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
	if err := ix.Verify(ctx); err != nil {
		fmt.Fprintf(stderr, "flowq verify: %s: %v\n", path, err)
		return 1
	}
	n, err := ix.Count(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "flowq verify: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d transactions, every key consistent with its record (%v)\n", path, n, time.Since(start).Round(time.Millisecond))
	return 0
}
