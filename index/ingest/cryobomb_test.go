package ingest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// TestCryoRowsBounded: a cryo range whose logs file is small but declares
// rows by the million (one log copied: its columns dictionary- and
// run-length-encoded, then compressed; 2,000,000 rows in 542 kB) fails
// as the range's input, naming the file and the limit, within a bounded
// allocation: refused before it is read when one row group declares too
// many rows, and as soon as the rows read pass the budget when they come
// in small row groups. Without the bound the first file's range
// allocated 9.2 GB before its bundle was refused, the second's 2.0 GB;
// ten times as many rows would not fit in memory.
func TestCryoRowsBounded(t *testing.T) {
	cs := cryoCases(t)
	c := cs[len(cs)-3] // triangular_arb, block 11117996
	lo := c.block / 1000 * 1000
	const max = 64 << 20 // the input limit of this test's ingests: rows may take 32 MiB
	for _, tc := range []struct {
		name string
		rows int
		opts []parquet.WriterOption
	}{
		{"one row group", 2_000_000, nil},
		{"row groups of 10,000", 400_000, []parquet.WriterOption{parquet.MaxRowsPerRowGroup(10_000)}},
	} {
		dir := t.TempDir()
		logs, _, _ := c.writeCryo(t, dir, lo, lo+999)
		f, err := os.Open(logs)
		if err != nil {
			t.Fatal(err)
		}
		one := make([]cryoLogRow, 1)
		if _, err := parquet.NewGenericReader[cryoLogRow](f).Read(one); err != nil && len(one) != 1 {
			t.Fatal(err)
		}
		f.Close()
		if f, err = os.Create(logs); err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[cryoLogRow](f, append(tc.opts, parquet.Compression(&zstd.Codec{}))...)
		rows := make([]cryoLogRow, 10_000)
		for i := range rows {
			rows[i] = one[0]
		}
		for range tc.rows / len(rows) {
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		st, _ := os.Stat(logs)

		ix, err := index.Open(filepath.Join(t.TempDir(), "ix"))
		if err != nil {
			t.Fatal(err)
		}
		ins, err := ingest.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		var fails []index.Failure
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		_, err = ingest.Ingest(context.Background(), ix, ins, ingest.Options{MaxBytes: max, OnFailure: func(f index.Failure) { fails = append(fails, f) }})
		runtime.ReadMemStats(&m1)
		ix.Close()
		alloc := float64(m1.TotalAlloc-m0.TotalAlloc) / (1 << 20)
		t.Logf("%s: %d rows in %d bytes: %.1f MB allocated, %v", tc.name, tc.rows, st.Size(), alloc, fails)
		want := fmt.Sprintf("the range's rows decode to more than %d bytes", max/2)
		if err != nil || len(fails) != 1 || !strings.Contains(fails[0].Msg, logs) || !strings.Contains(fails[0].Msg, want) {
			t.Errorf("%s: %v, failures %v", tc.name, err, fails)
		}
		if alloc > 4*max/(1<<20) {
			t.Errorf("%s: %.1f MB allocated, over four times the input limit", tc.name, alloc)
		}
	}
}
