package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo")
	out, errs, code := flowq(t, nil, "", "demo", "--index", idx)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "24 transactions stored, 0 skipped (already indexed), 0 failed") {
		t.Errorf("ingest summary: %s", errs)
	}
	for _, want := range []string{
		"flowq> count by verdict",
		"arbitrage  8",
		"flowq> arbitrages with profit over 0.01 WETH through at least three pools",
		"flowq repl --index " + idx,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Again: nothing to ingest, the same answers.
	out2, errs, code := flowq(t, nil, "", "demo", "--index", idx)
	if code != 0 || !strings.Contains(errs, "0 transactions stored, 24 skipped") {
		t.Errorf("second demo: exit %d: %s", code, errs)
	}
	if out2 != out {
		t.Error("the second demo answered differently")
	}
	// The default directory is beside the index, under XDG_DATA_HOME.
	env := func(k string) (string, bool) {
		if k == "XDG_DATA_HOME" {
			return "/data", true
		}
		return "", false
	}
	if d, _ := demoDir("", env); d != filepath.Join("/data", "flowq", "demo") {
		t.Errorf("demo dir %s", d)
	}
	_, errs, code = flowq(t, nil, "", "demo", "--index", idx, "--format", "yaml")
	if code != 2 || !strings.Contains(errs, `--format "yaml"`) {
		t.Errorf("bad format: exit %d: %s", code, errs)
	}
}
