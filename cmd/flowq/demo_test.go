package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
)

// demoTxs is how many transactions the demo ingests: the examples it
// embeds, one per file (examples/mainnet and examples/scenarios/geth).
func demoTxs(t *testing.T) int {
	t.Helper()
	n := 0
	for _, d := range []string{"../../examples/mainnet", "../../examples/scenarios/geth"} {
		files, err := filepath.Glob(filepath.Join(d, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d bundles, %v", d, len(files), err)
		}
		n += len(files)
	}
	return n
}

func TestDemo(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "demo")
	out, errs, code := flowq(t, nil, "", "demo", "--index", idx)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, fmt.Sprintf("%d transactions stored, 0 skipped (already indexed), 0 failed", demoTxs(t))) {
		t.Errorf("ingest summary: %s", errs)
	}
	for _, want := range []string{
		"flowq> count by verdict",
		"arbitrage  22",
		"flowq> arbitrages with profit over 0.01 WETH through at least three pools",
		"flowq repl --index " + idx,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Again: nothing to ingest, the same answers.
	out2, errs, code := flowq(t, nil, "", "demo", "--index", idx)
	if code != 0 || !strings.Contains(errs, fmt.Sprintf("0 transactions stored, %d skipped", demoTxs(t))) {
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

// setSchema rewrites an index's schema key, as an earlier flowq would have
// written it.
func setSchema(t *testing.T, dir string, schema, records uint32) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	v := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, schema), records)
	if err := db.Update(func(txn *badger.Txn) error { return txn.Set([]byte{byte(index.KindSchema)}, v) }); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDemoOldSchema: the demo's own index, built by an earlier flowq, is
// built again; an index the user named is refused, not touched.
func TestDemoOldSchema(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": data}
	if _, errs, code := flowq(t, env, "", "demo"); code != 0 {
		t.Fatalf("first demo: exit %d: %s", code, errs)
	}
	own := filepath.Join(data, "flowq", "demo")
	setSchema(t, own, 2, 2)
	out, errs, code := flowq(t, env, "", "demo")
	if code != 0 || !strings.Contains(errs, "built by an earlier flowq (schema 2); building it again") ||
		!strings.Contains(errs, fmt.Sprintf("%d transactions stored", demoTxs(t))) || !strings.Contains(out, "arbitrage  22") {
		t.Fatalf("demo over an old index: exit %d\n%s\n%s", code, errs, out)
	}

	named := filepath.Join(t.TempDir(), "mine")
	if _, errs, code := flowq(t, nil, "", "demo", "--index", named); code != 0 {
		t.Fatalf("demo --index: exit %d: %s", code, errs)
	}
	setSchema(t, named, 2, 2)
	_, errs, code = flowq(t, nil, "", "demo", "--index", named)
	if code != 1 || !strings.Contains(errs, "has schema 2 (records v2); this flowq uses schema") {
		t.Fatalf("demo over a named old index: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(named, "MANIFEST")); err != nil {
		t.Errorf("the named index was removed: %v", err)
	}
}
