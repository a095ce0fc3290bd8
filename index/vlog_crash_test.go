package index

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReopenAfterKillAtVlogCreation: a process killed between creating a
// value-log file and sizing it leaves the file empty (TestCrashSafety met
// it: seed 1795314510401613312, trial 3). The index must open anyway,
// with what it held.
func TestReopenAfterKillAtVlogCreation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ix")
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(vlogs) == 0 {
		t.Fatal("no value log after creating an index")
	}
	for _, v := range vlogs {
		if err := os.Truncate(v, 0); err != nil {
			t.Fatal(err)
		}
	}
	ix, err = Open(dir)
	if err != nil {
		t.Fatalf("reopen with an empty value log: %v", err)
	}
	defer ix.Close()
	if err := ix.Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
}
