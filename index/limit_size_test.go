package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOversizedFileNotRead: a file over MaxBytes is refused from its size,
// before it is read, and recorded as a failure naming the limit; with the
// limit raised, --retry-failed ingests it.
func TestOversizedFileNotRead(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(corpusDir, "mev-inspect-rs/res/triangular_arb.data.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	in := FileInput(path)
	read := 0
	load := in.Load
	in.Load = func() ([]byte, error) { read++; return load() }
	ix := openTemp(t)
	sum, err := ix.Ingest(context.Background(), []Input{in}, IngestOptions{MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if read != 0 || sum.Failed != 1 || sum.Stored != 0 {
		t.Fatalf("read %d times, summary %+v", read, sum)
	}
	var msgs []string
	ix.Failures(context.Background(), func(f Failure) error { msgs = append(msgs, f.String()); return nil })
	if len(msgs) != 1 || !strings.Contains(msgs[0], "over the limit of 100 bytes (--max-bytes); not read") {
		t.Fatalf("failures: %q", msgs)
	}
	sum, err = ix.RetryFailed(context.Background(), IngestOptions{}, nil)
	if err != nil || sum.Failed != 0 || sum.Stored != 1 {
		t.Fatalf("retry: %v %+v", err, sum)
	}
}
