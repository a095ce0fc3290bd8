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

// TestInspectDirSkipsNonTraces: inspect DIR skips the JSON files that
// are not traces (a package.json, an array of numbers), naming each, and
// exits 0; a trace cut short in the same folder still fails.
func TestInspectDirSkipsNonTraces(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("../../examples/mainnet/curve_arb.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"trace.json":   string(b),
		"package.json": `{"name":"x","version":"1.0.0"}`,
		"numbers.json": `[1,2]`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, errs, code := flowq(t, nil, "", "inspect", dir)
	if code != 0 || !strings.Contains(errs, "package.json: skipped: not a trace (unrecognised object") ||
		!strings.Contains(errs, "numbers.json: skipped: not a trace") ||
		!strings.Contains(errs, "1 transactions decoded, 0 failed, 2 files skipped (not traces)") {
		t.Errorf("exit %d:\n%s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "cut.json"), b[:3000], 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = flowq(t, nil, "", "inspect", dir)
	if code != 1 || !strings.Contains(errs, "cut.json: at $.") || !strings.Contains(errs, "1 failed, 2 files skipped") {
		t.Errorf("with a trace cut short: exit %d:\n%s", code, errs)
	}
	// a file named on the command line is not skipped: it was asked for
	_, errs, code = flowq(t, nil, "", "inspect", filepath.Join(dir, "package.json"))
	if code != 1 || strings.Contains(errs, "skipped") {
		t.Errorf("a named non-trace: exit %d:\n%s", code, errs)
	}
}
