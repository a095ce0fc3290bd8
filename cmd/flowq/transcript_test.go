package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/internal/evmnode"
	"github.com/flowq/flowq/repl/serve"
)

// client runs a flowq command in a process of its own, as a second
// terminal would.
func client(args ...string) (stdout, stderr string, code int, err error) {
	cmd := exec.Command("flowq", args...)
	cmd.Env = append(os.Environ(), "FLOWQ_NO_SERVER=") // find the server
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, err
}

// TestTranscriptServeIngestQuery is issue 21's transcript: a `flowq
// serve` process holds an index; a client ingests a block range from a
// go-ethereum node on loopback while two other clients query the index
// over and over. Every query answers (exit 0, through the server), each
// sees a consistent snapshot (the count never goes down, never passes
// the blocks' transactions), nothing is lost (at the end the index holds
// every transaction of the blocks), and a server killed with SIGKILL
// leaves an index the next server opens with the same count.
func TestTranscriptServeIngestQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node and three processes")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	const blocks, perBlock = 30, 4
	nonces := make([]uint64, evmnode.NumKeys)
	for b := 0; b < blocks; b++ {
		var txs []*types.Transaction
		for i := 0; i < perBlock; i++ {
			from := (b + i) % evmnode.NumKeys
			to := crypto.PubkeyToAddress(evmnode.Key((from + 1) % evmnode.NumKeys).PublicKey)
			txs = append(txs, types.MustSignNewTx(evmnode.Key(from), node.Signer(), &types.DynamicFeeTx{
				ChainID: big.NewInt(evmnode.ChainID), Nonce: nonces[from], GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11),
				Gas: 21000, To: &to, Value: big.NewInt(int64(1000 + i)),
			}))
			nonces[from]++
		}
		if _, err := node.Mine(context.Background(), txs...); err != nil {
			t.Fatal(err)
		}
	}
	const total = blocks * perBlock

	dir := filepath.Join(t.TempDir(), "index")
	srv := startServe(t, dir)

	// count is the index's transaction count, as a client asks it.
	countRE := regexp.MustCompile(`(?m)^traces,([0-9]+),`)
	count := func() (int, string, error) {
		out, errs, code, err := client("query", "--index", dir, "--format", "csv", "count transactions by mode")
		if err != nil || code != 0 {
			return 0, errs, fmt.Errorf("exit %d (%v): %s", code, err, errs)
		}
		if out == "" {
			return 0, errs, nil // no rows yet: an empty index
		}
		m := countRE.FindStringSubmatch(out)
		if m == nil {
			return 0, errs, fmt.Errorf("unexpected answer %q", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n, errs, nil
	}

	ingestDone := make(chan struct{})
	var ingestOut, ingestErr string
	var ingestCode int
	go func() {
		defer close(ingestDone)
		ingestOut, ingestErr, ingestCode, _ = client("ingest", "--index", dir, "--rpc", node.URL(), "--blocks", fmt.Sprintf("1..%d", blocks))
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	answered := [2]int{}
	during := [2]int{} // answers while the ingest ran
	var failures []string
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			last := 0
			for tries := 0; tries < 2000; tries++ {
				running := true
				select {
				case <-ingestDone:
					running = false
				default:
				}
				n, errs, err := count()
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, fmt.Sprintf("client %d: %v", c, err))
				case errs != "": // opened by the client itself, it would say it reads a snapshot
					failures = append(failures, fmt.Sprintf("client %d did not go through the server: %q", c, errs))
				case n < last || n > total:
					failures = append(failures, fmt.Sprintf("client %d: count %d after %d (of %d): not a consistent snapshot", c, n, last, total))
				default:
					answered[c]++
					if running {
						during[c]++
					}
				}
				stop := len(failures) > 20 || !running && answered[c] >= 3
				mu.Unlock()
				last = max(last, n)
				if stop {
					return
				}
			}
		}(c)
	}
	select {
	case <-ingestDone:
	case <-time.After(3 * time.Minute):
		t.Fatal("the ingest did not end in 3 minutes")
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if ingestCode != 0 || !strings.Contains(ingestErr, "served by flowq serve") {
		t.Fatalf("ingest: exit %d:\n%s\n%s", ingestCode, ingestOut, ingestErr)
	}
	t.Logf("queries answered: %v (%v while the ingest ran)", answered, during)
	if during[0]+during[1] == 0 {
		t.Errorf("no query ran while the ingest did: the test did not test sharing")
	}
	n, _, err := count()
	if err != nil || n != total {
		t.Fatalf("after the ingest: %d transactions (%v), want the blocks' %d", n, err, total)
	}

	// kill -9 the server: the next one opens the index it left, whole.
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	startServe(t, dir)
	n, errs, err := count()
	if err != nil || n != total {
		t.Fatalf("after kill -9 and a new server: %d transactions (%v), want %d: %s", n, err, total, errs)
	}
	if _, errs, code, _ := client("verify", "--index", dir); code != 0 {
		t.Errorf("verify after the crash: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, serve.InfoFile)); err != nil {
		t.Errorf("the new server's file: %v", err)
	}
}
