package ingest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
)

// TestOptionsBounds: Check names an option out of its range; an ingest
// given one anyway (a caller that did not check) holds it to its bound
// and runs, where a billion workers was a fatal out-of-memory.
func TestOptionsBounds(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Workers: MaxWorkers + 1}, "workers 1025: want 1 to 1024"},
		{Options{Workers: -1}, "workers -1"},
		{Options{BatchTxs: MaxBatchTxs + 1}, "batch 65537: want 1 to 65536"},
		{Options{BatchTxs: -1}, "batch -1"},
	} {
		if err := tc.o.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	if err := (&Options{Workers: MaxWorkers, BatchTxs: MaxBatchTxs}).Check(); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	inputs, err := Files(filepath.Join("..", "..", "examples", "mainnet"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Ingest(context.Background(), ix, inputs, Options{Workers: 1 << 30, BatchTxs: 1 << 40})
	if err != nil || sum.Stored == 0 || sum.Failed != 0 {
		t.Fatalf("an ingest with a billion workers: %+v, %v", sum, err)
	}
}
