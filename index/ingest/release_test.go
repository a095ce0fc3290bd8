package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/internal/workload"
)

// TestReleasedBytesNotRetained: an input's bytes given back to their
// owner (Input.Release) once decoded, and overwritten by it at once, do
// not change what is written: every record of three synthetic blocks
// (one of them broken, for a decode failure) is the same as when the
// bytes are kept, and the release is called once an input.
func TestReleasedBytesNotRetained(t *testing.T) {
	sc, err := workload.LoadScenarios(filepath.Join("..", "..", "examples", "scenarios", "geth"))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 3, BlockTxs: 40})
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]byte
	for range 3 {
		blocks = append(blocks, gen.Block().Bundle)
	}
	blocks = append(blocks, []byte(`{"block": {"number": "0x1"}, "receipts": [], "traces": [{"txHash": "0x12`))
	epoch := time.Unix(0, 0)
	clock := func() time.Time { return epoch }
	run := func(reuse bool) (*index.Index, Summary, int) {
		ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		var released atomic.Int32 // called by the decoders, two at a time
		var inputs []Input
		for i, b := range blocks {
			b := append([]byte(nil), b...)
			in := BundleInput(fmt.Sprintf("test:%d", i), b)
			if reuse {
				in.Release = func() {
					released.Add(1)
					for k := range b {
						b[k] = '!' // the owner writes its next bundle here
					}
				}
			}
			inputs = append(inputs, in)
		}
		sum, err := Ingest(context.Background(), ix, inputs, Options{Clock: clock, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return ix, sum, int(released.Load())
	}
	kept, sumKept, _ := run(false)
	reused, sumReused, released := run(true)
	if released != len(blocks) {
		t.Errorf("Release called %d times for %d inputs", released, len(blocks))
	}
	if sumKept.Stored != 120 || sumKept.Failed == 0 || sumReused.Stored != sumKept.Stored || sumReused.Failed != sumKept.Failed {
		t.Fatalf("stored/failed %d/%d with the bytes released, %d/%d kept (want 120 stored and a failure)", sumReused.Stored, sumReused.Failed, sumKept.Stored, sumKept.Failed)
	}
	var refs []index.Ref
	if err := kept.ByBlocks(context.Background(), index.AllBlocks, func(r index.Ref) error { refs = append(refs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(refs) != 120 {
		t.Fatalf("%d records, want 120", len(refs))
	}
	for _, r := range refs {
		a, err := kept.Get(r.Hash)
		if err != nil {
			t.Fatal(err)
		}
		b, err := reused.Get(r.Hash)
		if err != nil {
			t.Fatalf("tx %s, bytes released: %v", r.Hash.Hex(), err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("tx %s: the record differs when the input's bytes are released after decoding", r.Hash.Hex())
		}
	}
	var fk, fr []string
	for _, x := range []struct {
		ix  *index.Index
		out *[]string
	}{{kept, &fk}, {reused, &fr}} {
		if err := x.ix.Failures(context.Background(), func(f index.Failure) error { *x.out = append(*x.out, f.Msg); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(fk, fr) {
		t.Fatalf("failures differ: %q kept, %q released", fk, fr)
	}
}
