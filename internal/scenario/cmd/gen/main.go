// Command gen regenerates examples/scenarios: it starts an in-process
// go-ethereum node, deploys the npm contracts and the project's bots, runs
// every scenario, reads the truth from the chain and saves each scenario's
// bundle in the geth (callTracer with logs) and Parity (flatCallTracer)
// shapes.
//
//	make scenario-setup                 # once: npm ci and the solc compile step
//	go run ./internal/scenario/cmd/gen  # writes examples/scenarios
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/flowq/flowq/internal/scenario"
)

func main() {
	out := flag.String("out", "examples/scenarios", "output directory")
	npm := flag.String("npm", "", "directory of package.json, node_modules and build (default internal/scenario/npm)")
	verbose := flag.Bool("v", false, "show go-ethereum's log")
	flag.Parse()
	start := time.Now()
	if err := scenario.Generate(context.Background(), scenario.Options{NPMDir: *npm, Verbose: *verbose}, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gen: wrote %d scenarios to %s in %s\n", len(scenario.Names()), *out, time.Since(start).Round(time.Millisecond))
}
