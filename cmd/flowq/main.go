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
//	flowq chains
//	flowq version
//
// See README.md for the input shapes and the configuration.
package main

import (
	"fmt"
	"io"
	"os"
)

const version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv))
}

const usage = `flowq: what a transaction did with money, from its execution trace

usage:
  flowq demo                              index the bundled examples and run the tour of queries
  flowq inspect [flags] [FILE|DIR|-]...   analyse traces: verdict, profit, normal form (--t0: the decoded tree)
  flowq fetch --rpc URL --blocks A..B --out DIR   save bundles from a node (JSON-RPC)
  flowq ingest [--index DIR] FILE|DIR...  analyse and store transactions in the index (--retry-failed)
  flowq export [--index DIR] --format csv|jsonl [--out FILE]   write the index's records
  flowq verify [--index DIR]              check the index's keys against its records
  flowq draw [--view graph|tree] [--format dot|svg|png] [--out FILE] FILE|-|--index DIR TXHASH
                                          draw a transaction's transfer graph or reduced tree
  flowq repl [--index DIR] [--history FILE] [--mode table|json|csv]   query the index interactively
  flowq query [--index DIR] 'STATEMENTS'  run query statements against the index
  flowq run [--index DIR] FILE...         run query files (stops at the first error)
  flowq chains                            list the built-in chains and their defaults
  flowq version                           print the version

Run 'flowq inspect -h' for the inspect flags.
`

// run is main without the process: it is what the tests call.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
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
	case "query":
		return queryCmd(args[1:], stdin, stdout, stderr, lookupEnv)
	case "run":
		return runCmd(args[1:], stdout, stderr, lookupEnv)
	case "chains":
		return chains(stdout)
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
