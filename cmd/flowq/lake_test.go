package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/lake"
)

const gethScenarios = "../../examples/scenarios/geth"

func lakeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	fs, err := lake.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range fs {
		rel, _ := filepath.Rel(dir, f)
		out[rel], _ = os.ReadFile(f)
	}
	return out
}

// The lake written from the inputs and the lake exported from a Badger
// index of the same inputs are the same files, byte for byte.
func TestLakeIngestEqualsExport(t *testing.T) {
	tmp := t.TempDir()
	direct, exported, ix := filepath.Join(tmp, "direct"), filepath.Join(tmp, "exported"), filepath.Join(tmp, "ix")
	_, errs, code := flowq(t, nil, "", "ingest", "--lake", direct, "--range-size", "100", mainnetDir, gethScenarios)
	if code != 0 || !strings.Contains(errs, "range files") {
		t.Fatalf("ingest --lake exit %d: %s", code, errs)
	}
	if _, errs, code = flowq(t, nil, "", "ingest", "--index", ix, mainnetDir, gethScenarios); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, errs)
	}
	_, errs, code = flowq(t, nil, "", "export", "--index", ix, "--format", "parquet", "--lake", exported, "--range-size", "100")
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, errs)
	}
	a, b := lakeFiles(t, direct), lakeFiles(t, exported)
	if len(a) < 3 || len(a) != len(b) {
		t.Fatalf("%d files from ingest, %d from export", len(a), len(b))
	}
	for name, x := range a {
		if !strings.HasPrefix(name, "chain=ethereum"+string(filepath.Separator)) {
			t.Errorf("file %s outside chain=ethereum", name)
		}
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between ingest --lake and export --format parquet", name)
		}
	}
}

func TestLakeShardsCLI(t *testing.T) {
	tmp := t.TempDir()
	whole := filepath.Join(tmp, "whole")
	if _, errs, code := flowq(t, nil, "", "ingest", "--lake", whole, "--range-size", "10", mainnetDir, gethScenarios); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Each shard into its own directory (two machines): disjoint files,
	// whose union is the unsharded lake.
	b := map[string][]byte{}
	for i, s := range []string{"0/2", "1/2"} {
		dir := filepath.Join(tmp, "shard"+s[:1])
		if _, errs, code := flowq(t, nil, "", "ingest", "--lake", dir, "--range-size", "10", "--shard", s, mainnetDir, gethScenarios); code != 0 {
			t.Fatalf("shard %s exit %d: %s", s, code, errs)
		}
		for name, x := range lakeFiles(t, dir) {
			if _, dup := b[name]; dup {
				t.Errorf("%s written by both shards", name)
			}
			r, _ := lake.ParseFileName(filepath.Base(name))
			if int(r.First/10%2) != i {
				t.Errorf("shard %s wrote %s", s, name)
			}
			b[name] = x
		}
	}
	a := lakeFiles(t, whole)
	if len(a) < 3 || len(a) != len(b) {
		t.Fatalf("%d files unsharded, %d from two shards", len(a), len(b))
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs", name)
		}
	}
}

func TestLakeIngestRPC(t *testing.T) {
	url, hash, _ := replayNode(t, 0)
	dir := t.TempDir()
	_, errs, code := flowq(t, nil, "", "ingest", "--lake", dir, "--rpc", url, "--blocks", "72..72", "--range-size", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p := filepath.Join(dir, "chain=ethereum", "blocks-000000000072-000000000072.parquet")
	rows, err := lake.ReadRange(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.EqualFold(rows[0].TxHash, hash) || rows[0].Block != 72 {
		t.Fatalf("rows %d, want the one transaction %s of block 72", len(rows), hash)
	}
	// A node that refuses: no file, exit 1, the blocks named.
	dir2 := t.TempDir()
	_, errs, code = flowq(t, nil, "", "ingest", "--lake", dir2, "--rpc", "http://127.0.0.1:1", "--blocks", "72..72", "--range-size", "1")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	if fs, _ := lake.Files(dir2); len(fs) != 0 {
		t.Fatalf("files written from a node that did not answer: %v", fs)
	}
}

func TestLakeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ingest", "--lake", "x", "--shard", "2/2", mainnetDir}, "--shard"},
		{[]string{"ingest", "--lake", "x", "--range-size", "0", mainnetDir}, "range size"},
		{[]string{"ingest", "--lake", "x"}, "give the files"},
		{[]string{"ingest", "--lake", "x", "--blocks", "1..2", mainnetDir}, "--blocks takes no files"},
		{[]string{"ingest", "--lake", "x", "--blocks", "1..2"}, "--blocks needs --rpc"},
		{[]string{"export", "--format", "parquet"}, "needs --lake"},
		{[]string{"export", "--lake", "x", "--format", "csv"}, "--format parquet"},
	} {
		_, errs, code := flowq(t, nil, "", c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errs, c.want)
		}
	}
}
