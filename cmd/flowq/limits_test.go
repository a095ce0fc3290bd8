package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestLimitFlags: each decoder limit has a flag; an input over it
// fails with a line naming the limit and its value, the exit status is 1,
// and --retry-failed with the limit raised ingests it.
func TestIngestLimitFlags(t *testing.T) {
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--max-transfers", "2", "over the limit of 2 (flowq --max-transfers)"},
		{"--max-depth", "1", "deeper than the limit of 1 (flowq --max-depth)"},
		{"--max-bytes", "1000", "over the limit of 1000 bytes (--max-bytes); not read"},
	} {
		t.Run(c.flag, func(t *testing.T) {
			idx := filepath.Join(t.TempDir(), "idx")
			_, errs, code := flowq(t, nil, "", "ingest", "--index", idx, c.flag, c.value, mainnetDir)
			if code != 1 || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, want 1 and a failure saying %q:\n%s", code, c.want, errs)
			}
			_, errs, code = flowq(t, nil, "", "ingest", "--index", idx, "--retry-failed")
			if code != 0 || !strings.Contains(errs, "0 failed") {
				t.Errorf("retry with the default limits: exit %d:\n%s", code, errs)
			}
		})
	}
}
