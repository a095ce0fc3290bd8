// Command flowq tells what a blockchain transaction did with money, from
// its execution trace.
//
//	flowq demo [--index DIR]
//	flowq inspect [flags] [FILE|DIR|-]...
//	flowq fetch --rpc URL --blocks A..B --out DIR
//	flowq ingest [--index DIR] [flags] FILE|DIR...
//	flowq export [--index DIR] --format csv|jsonl [--out FILE]
//	flowq verify [--index DIR]
//	flowq query [--index DIR] [--format table|json|csv] 'STATEMENTS'
//	flowq run [--index DIR] FILE...
//	flowq draw [--view graph|tree] [--format dot|svg|png] [--out FILE] [--tx HASH] FILE|-
//	flowq repl [--index DIR] [--history FILE] [--mode table|json|csv]
//	flowq serve [--index DIR] [--listen 127.0.0.1:PORT]
//	flowq chains
//	flowq version
//
// See README.md for the input shapes and the configuration.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/repl/gcfloor"
)

const version = "0.1.0-dev"

func main() { os.Exit(runMain()) }

// runMain is main without the exit: what the tests' re-executed binary
// runs as "flowq" too.
//
// A memory fault in the main goroutine (a page of one of Badger's
// memory-mapped files that cannot be read: a file cut short, a full
// tmpfs) becomes a panic that run recovers with a short message, instead
// of the runtime's fatal error, which prints every goroutine. Faults in
// Badger's own goroutines cannot be turned into panics; the disk space
// check (index, space.go) is what keeps them from happening.
func runMain() int {
	debug.SetPanicOnFault(true)
	gcfloor.Start() // a small heap is collected at 64 MB, not every few (repl/gcfloor)
	return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv)
}

const usage = `flowq: what a transaction did with money, from its execution trace

usage:
  flowq demo                              index the bundled examples and run the tour of queries
  flowq inspect [flags] [FILE|DIR|-]...   analyse traces: verdict, profit, normal form (--t0: the decoded tree)
  flowq fetch --rpc URL --blocks A..B --out DIR   save bundles from a node (JSON-RPC)
  flowq ingest [--index DIR] FILE|DIR...  analyse and store transactions in the index (--retry-failed)
  flowq export [--index DIR] --format csv|jsonl [--out FILE]   write the index's records
  flowq sql --lake DIR 'SELECT ...'     SQL on DuckDB over a Parquet lake (ingest --lake; a flowq built with -tags duckdb)
  flowq verify [--index DIR]              check the index's keys against its records
  flowq draw [--view graph|tree] [--format dot|svg|png] [--out FILE] FILE|-|--index DIR TXHASH
                                          draw a transaction's transfer graph or reduced tree
  flowq repl [--index DIR] [--history FILE] [--mode table|json|csv]   query the index interactively
  flowq query [--index DIR] 'STATEMENTS'  run query statements against the index
  flowq run [--index DIR] FILE...         run query files (stops at the first error)
  flowq serve [--index DIR] [--listen ADDR]   serve the index over HTTP (and a web page); the commands above become its clients
  flowq chains                            list the built-in chains and their defaults
  flowq version                           print the version

Run 'flowq inspect -h' for the inspect flags.
`

// envDebug, when set, lets a panic go on with its stack trace instead of
// the short message run prints.
const envDebug = "FLOWQ_DEBUG"

// run is main without the process: it is what the tests call. A panic
// (a bug, or a memory fault turned into one) ends the command with a
// short message on stderr and exit status 1, as any runtime failure;
// with FLOWQ_DEBUG set it is not recovered, and prints its stack.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) (code int) {
	if v, _ := lookupEnv(envDebug); v == "" {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(stderr, "flowq: %s (set %s=1 to see where)\n", panicMessage(p), envDebug)
				code = 1
			}
		}()
	}
	if len(args) > 0 {
		index.Command = "flowq " + args[0] // what the index's holder file says
	}
	return dispatch(args, stdin, stdout, stderr, lookupEnv)
}

// panicMessage says what a recovered panic was, in one line.
func panicMessage(p any) string {
	if f, ok := p.(interface{ Addr() uintptr }); ok {
		return fmt.Sprintf("a memory-mapped file could not be read at %#x (a file of the index cut short, or a full disk?): %v", f.Addr(), p)
	}
	return fmt.Sprintf("internal error: %s", clipLine(fmt.Sprint(p), 300))
}

// clipLine keeps the first line of s, at most n bytes of it.
func clipLine(s string, n int) string {
	if first, _, cut := strings.Cut(s, "\n"); cut {
		s = first + " ..."
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "inspect":
		return inspect(args[1:], stdin, stdout, stderr, lookupEnv)
	case "fetch":
		return fetchCmd(args[1:], stdout, stderr, lookupEnv)
	case "ingest":
		return ingestCmd(args[1:], stdout, stderr, lookupEnv)
	case "verify":
		return verifyCmd(args[1:], stdout, stderr, lookupEnv)
	case "export":
		return exportCmd(args[1:], stdout, stderr, lookupEnv)
	case "repl":
		return replCmd(args[1:], stdin, stdout, stderr, lookupEnv)
	case "draw":
		return drawCmd(args[1:], stdin, stdout, stderr, lookupEnv)
	case "demo":
		return demoCmd(args[1:], stdout, stderr, lookupEnv)
	case "serve":
		return serveCmd(args[1:], stdout, stderr, lookupEnv)
	case "query":
		return queryCmd(args[1:], stdin, stdout, stderr, lookupEnv)
	case "run":
		return runCmd(args[1:], stdout, stderr, lookupEnv)
	case "chains":
		return chains(stdout)
	case "sql":
		return sqlCmd(args[1:], stdout, stderr) // lake_sql.go
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "flowq", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "flowq: unknown command %q\n\n%s", args[0], usage)
	return 2
}
