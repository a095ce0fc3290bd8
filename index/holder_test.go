package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// TestSnapshotBesideWriter: while an index is open for writing and an
// ingest commits to it, OpenReadOnly fails with a LockedError naming
// this process (from the holder file Open wrote), and OpenSnapshot opens
// it: each snapshot passes Verify (no half-written batch), counts never
// go down, and one taken after the ingest sees every transaction, those
// still in the writer's memtable included. Close removes the holder file.
func TestSnapshotBesideWriter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	w, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := index.ReadHolder(dir)
	if err != nil || h.Pid != os.Getpid() || h.Stale {
		t.Fatalf("holder file: %+v, %v", h, err)
	}
	_, err = index.OpenReadOnly(dir)
	var held *index.LockedError
	if !errors.As(err, &held) || held.Holder == nil || held.Holder.Pid != os.Getpid() || !strings.Contains(err.Error(), "in use by") {
		t.Fatalf("OpenReadOnly beside a writer: %v, want a LockedError naming this process", err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := ingest.Ingest(context.Background(), w, crashInputs(t), crashOptions())
		done <- err
	}()
	snapshot := func() int {
		t.Helper()
		s, err := index.OpenSnapshot(dir)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		defer s.Close()
		if err := s.Verify(context.Background()); err != nil {
			t.Fatalf("snapshot: verify: %v", err)
		}
		n, err := s.Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	prev, taken := 0, 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
			n := snapshot()
			if n < prev {
				t.Fatalf("a snapshot saw %d transactions, an earlier one %d", n, prev)
			}
			prev, taken = n, taken+1
		}
	}
	want, err := w.Count(context.Background())
	if err != nil || want == 0 {
		t.Fatalf("writer count %d, %v", want, err)
	}
	if n := snapshot(); n != want {
		t.Fatalf("snapshot after the ingest: %d transactions, the writer %d", n, want)
	}
	t.Logf("%d snapshots during the ingest (last saw %d), %d transactions in all", taken, prev, want)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, index.HolderFile)); !os.IsNotExist(err) {
		t.Fatalf("after Close the holder file is still there (%v)", err)
	}
}
