package scenario

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// The tests in this file run the scenarios on an in-process node. They need
// the npm contracts and the compiled bots: `make test` makes them first; a
// bare `go test` without them fails, naming the setup command.

var (
	liveOnce sync.Once
	liveEnv  *Env
	liveErr  error
)

func live(t *testing.T) *Env {
	t.Helper()
	liveOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		liveEnv, liveErr = Start(ctx, Options{})
	})
	if liveErr != nil {
		t.Fatalf("starting the scenario node: %v", liveErr)
	}
	return liveEnv
}

func TestMain(m *testing.M) {
	code := m.Run()
	if liveEnv != nil {
		liveEnv.Close()
	}
	os.Exit(code)
}

// TestLiveBundlesMatchExamples is test (c): the bundles fetched over HTTP
// from a freshly run node are byte for byte the saved examples (the chain
// is deterministic), in both shapes, and the truth read again from the
// chain is the saved truth.
func TestLiveBundlesMatchExamples(t *testing.T) {
	env := live(t)
	ctx := context.Background()
	for mode, sub := range map[fetch.Mode]string{fetch.Geth: "geth", fetch.Flat: "parity"} {
		got, err := env.Bundles(ctx, mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range env.Ran {
			path := filepath.Join(examplesDir, sub, r.Name+".json")
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[r.Name], want) {
				gtx := decodeBytes(t, "live "+r.Name, got[r.Name], r.Hash.Hex())
				wtx := decodeOne(t, path, r.Hash.Hex())
				t.Errorf("%s: the node's bundle differs from %s (regenerate with go run ./internal/scenario/cmd/gen); decoded: %v", r.Name, path, sameTx(gtx, wtx))
			}
		}
	}
	truth, err := env.Truth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := MarshalTruth(truth)
	want, err := os.ReadFile(filepath.Join(examplesDir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the truth read from the chain differs from truth.json: regenerate with go run ./internal/scenario/cmd/gen")
	}
}

// blockRanges returns the maximal runs of consecutive blocks in [1, the
// last scenario's block] that hold scenarios (scenario true) or do not
// (the setup blocks of each phase).
func blockRanges(env *Env, scenario bool) [][2]uint64 {
	holds := map[uint64]bool{}
	for _, r := range env.Ran {
		holds[r.Block] = true
	}
	var out [][2]uint64
	last := env.Ran[len(env.Ran)-1].Block
	for n := uint64(1); n <= last; n++ {
		if holds[n] != scenario {
			continue
		}
		if k := len(out); k > 0 && out[k-1][1] == n-1 {
			out[k-1][1] = n
		} else {
			out = append(out, [2]uint64{n, n})
		}
	}
	return out
}

// TestLiveSetupBlocksBothShapes fetches the setup blocks of both phases
// (many transactions each: contract creations, CREATE2 pair creations,
// mints, transfers, approvals) in the geth and flat modes and checks that
// every transaction decodes, and to the same transfers and T0 in both
// shapes.
func TestLiveSetupBlocksBothShapes(t *testing.T) {
	env := live(t)
	ctx := context.Background()
	ranges := blockRanges(env, false)
	if len(ranges) != len(phases()) {
		t.Errorf("setup block ranges %v, want one per phase", ranges)
	}
	decoded := map[fetch.Mode]map[string]*normalform.Tx{}
	for _, mode := range []fetch.Mode{fetch.Geth, fetch.Flat} {
		decoded[mode] = map[string]*normalform.Tx{}
		c, err := fetch.Dial(ctx, env.Node.URL(), fetch.Options{Mode: mode, Concurrency: 2, BatchSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ranges {
			err = c.Blocks(ctx, r[0], r[1], func(n uint64, bundle []byte) error {
				res := trace.Decode(bundle, trace.Options{Source: fmt.Sprintf("%s block %d", mode, n)})
				for _, e := range res.Errors {
					t.Errorf("%v", e)
				}
				for _, tx := range res.Txs {
					decoded[mode][tx.Meta.Hash.Hex()] = tx
				}
				return nil
			})
			if err != nil {
				break
			}
		}
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(decoded[fetch.Geth]) < 100 || len(decoded[fetch.Geth]) != len(decoded[fetch.Flat]) {
		t.Fatalf("decoded %d (geth) and %d (flat) setup transactions", len(decoded[fetch.Geth]), len(decoded[fetch.Flat]))
	}
	for h, g := range decoded[fetch.Geth] {
		p := decoded[fetch.Flat][h]
		if p == nil {
			t.Errorf("%s: missing from the flat shape", h)
			continue
		}
		if err := sameTx(g, p); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
}

// TestLiveBlockRange fetches the scenario blocks as block ranges (the
// path of `flowq fetch --blocks`), in the geth and flat modes, and checks
// that each block decodes to its saved scenarios' transactions, in order
// (the sandwich's three legs share a block).
func TestLiveBlockRange(t *testing.T) {
	env := live(t)
	ctx := context.Background()
	byBlock := map[uint64][]Ran{}
	for _, r := range env.Ran {
		byBlock[r.Block] = append(byBlock[r.Block], r)
	}
	for _, mode := range []fetch.Mode{fetch.Geth, fetch.Flat} {
		c, err := fetch.Dial(ctx, env.Node.URL(), fetch.Options{Mode: mode, Concurrency: 3, BatchSize: 2})
		if err != nil {
			t.Fatal(err)
		}
		sub := map[fetch.Mode]string{fetch.Geth: "geth", fetch.Flat: "parity"}[mode]
		seen, want := 0, 0
		for _, rg := range blockRanges(env, true) {
			want += int(rg[1] - rg[0] + 1)
			err = c.Blocks(ctx, rg[0], rg[1], func(n uint64, bundle []byte) error {
				seen++
				rs, ok := byBlock[n]
				if !ok {
					t.Errorf("unexpected block %d", n)
					return nil
				}
				res := trace.Decode(bundle, trace.Options{Source: fmt.Sprintf("%s block %d", mode, n)})
				for _, e := range res.Errors {
					t.Errorf("%v", e)
				}
				if len(res.Txs) != len(rs) {
					t.Errorf("%s block %d: decoded %d transactions, want %d", mode, n, len(res.Txs), len(rs))
					return nil
				}
				for i, r := range rs {
					got := res.Txs[i]
					if got.Meta.Hash != r.Hash {
						t.Errorf("%s block %d: transaction %d is %s, want %s (%s)", mode, n, i, got.Meta.Hash.Hex(), r.Hash.Hex(), r.Name)
						continue
					}
					want := decodeOne(t, filepath.Join(examplesDir, sub, r.Name+".json"), r.Hash.Hex())
					if err := sameTx(got, want); err != nil {
						t.Errorf("%s block %d (%s): %v", mode, n, r.Name, err)
					}
				}
				return nil
			})
			if err != nil {
				break
			}
		}
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if seen != want {
			t.Errorf("%s: %d blocks delivered, want %d", mode, seen, want)
		}
	}
}
