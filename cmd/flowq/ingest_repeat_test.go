package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestRepeatedTransaction: a transaction that two inputs of one
// ingest hold is stored once, and the summary says the second was a
// repeat, not "already indexed"; an ingest after says "already indexed".
func TestIngestRepeatedTransaction(t *testing.T) {
	src, err := filepath.Glob("../../examples/mainnet/*.json")
	if err != nil || len(src) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	b, err := os.ReadFile(src[0])
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	for _, name := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "index")
	_, errs, code := flowq(t, nil, "", "ingest", "--index", dir, in)
	if code != 0 || !strings.Contains(errs, "1 transactions stored, 1 skipped (repeated from another input of this ingest)") {
		t.Errorf("first ingest: exit %d: %s", code, errs)
	}
	_, errs, code = flowq(t, nil, "", "ingest", "--index", dir, "--force", in)
	if code != 0 || !strings.Contains(errs, "0 transactions stored, 2 skipped (already indexed)") {
		t.Errorf("second ingest: exit %d: %s", code, errs)
	}
}
