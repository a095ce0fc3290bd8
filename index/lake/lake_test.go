package lake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// exampleSources are the repository's real bundles (mainnet) and the
// scenario bundles.
func exampleSources(t testing.TB) []Source {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "examples")
	var out []Source
	for _, d := range []string{"mainnet", "scenarios/geth"} {
		ms, err := filepath.Glob(filepath.Join(root, d, "*.json"))
		if err != nil || len(ms) == 0 {
			t.Fatalf("no bundles under %s: %v", d, err)
		}
		for _, p := range ms {
			out = append(out, Source{Name: p, Load: func(int) ([]byte, error) { return os.ReadFile(p) }})
		}
	}
	return out
}

// analysed decodes and analyses the sources directly, by hash.
func analysed(t testing.TB, srcs []Source) map[string]*normalform.Analysis {
	out := map[string]*normalform.Analysis{}
	for _, s := range srcs {
		b, _ := s.Load(0)
		res := trace.Decode(b, trace.Options{Source: s.Name})
		for _, tx := range res.Txs {
			a, err := normalform.Analyze(tx, normalform.DefaultConfig())
			if err != nil || !tx.Meta.HasHash || !tx.Meta.HasBlock {
				continue
			}
			out[tx.Meta.Hash.Hex()] = a
		}
	}
	return out
}

func readLake(t testing.TB, dir string) []Row {
	files, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Row
	for _, f := range files {
		rs, err := ReadRange(f)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rs...)
	}
	return rows
}

func TestIngestExamplesReadBack(t *testing.T) {
	srcs := exampleSources(t)
	dir := t.TempDir()
	l := Layout{Dir: dir, Chain: "mainnet", RangeSize: 1000}
	sum, err := Ingest(context.Background(), l, srcs, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := analysed(t, srcs)
	if len(want) == 0 || sum.Rows != len(want) {
		t.Fatalf("wrote %d rows, analysed %d (%s)", sum.Rows, len(want), sum)
	}
	rows := readLake(t, dir)
	if len(rows) != len(want) {
		t.Fatalf("read %d rows, want %d", len(rows), len(want))
	}
	for i := range rows {
		r := &rows[i]
		a := want[r.TxHash]
		if a == nil {
			t.Fatalf("row %s not analysed", r.TxHash)
		}
		if r.Block != a.Tx.Meta.Block || r.Verdict != a.Verdict.String() || r.HashShape != a.Hashes().Shape.Hex() {
			t.Errorf("tx %s: block %d verdict %s", r.TxHash, r.Block, r.Verdict)
		}
		if len(r.Gross) != len(a.Gross) {
			t.Fatalf("tx %s: %d gross amounts, want %d", r.TxHash, len(r.Gross), len(a.Gross))
		}
		for j, e := range a.Gross {
			g := r.Gross[j]
			if g.Token != e.Token.Key() || g.Amount != e.Amount.String() {
				t.Errorf("tx %s gross %d: %s=%s, want %s=%s", r.TxHash, j, g.Token, g.Amount, e.Token.Key(), e.Amount.String())
			}
			back, ok := AmountFromKey(g.Key)
			if !ok || back.Cmp(e.Amount) != 0 {
				t.Errorf("tx %s gross %d: key decodes to %s, want %s", r.TxHash, j, back.String(), e.Amount.String())
			}
		}
		if _, err := normalform.DecodeNF(r.NF); err != nil {
			t.Errorf("tx %s: nf: %v", r.TxHash, err)
		}
		if i > 0 && less(r, &rows[i-1]) && filepath.Dir("") == "." {
			// rows of one file are sorted; files are read in range order
			t.Errorf("row %d out of order", i)
		}
	}
	for _, f := range sum.Files {
		if !strings.HasPrefix(f, filepath.Join(dir, "chain=mainnet")+string(filepath.Separator)+"blocks-") {
			t.Errorf("file %s not under chain=mainnet", f)
		}
	}
}

func TestAmountKeyOrder(t *testing.T) {
	vals := []string{"-115792089237316195423570985008687907853269984665640564039457584007913129639935", "-1000", "-1", "0", "1", "255", "256", "115792089237316195423570985008687907853269984665640564039457584007913129639935"}
	var prev []byte
	for i, v := range vals {
		var s normalform.Signed
		d := strings.TrimPrefix(v, "-")
		if err := s.Abs.SetFromDecimal(d); err != nil {
			t.Fatal(err)
		}
		s.Neg = d != v
		k := AmountKey(s)
		if i > 0 && bytes.Compare(prev, k) >= 0 {
			t.Errorf("key of %s not above key of %s", v, vals[i-1])
		}
		if back, ok := AmountFromKey(k); !ok || back.String() != s.String() {
			t.Errorf("%s decodes to %s", v, back.String())
		}
		prev = k
	}
}

// failAfter fails every write once n bytes were written.
type failAfter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write failure")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errInjected
	}
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errInjected
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestFailedRangeLeavesNoFile(t *testing.T) {
	srcs := exampleSources(t)
	dir := t.TempDir()
	l := Layout{Dir: dir, Chain: "mainnet", RangeSize: 1000}
	var sum Summary
	rows, err := Analyse(context.Background(), l, srcs, IngestOptions{}, &sum)
	if err != nil {
		t.Fatal(err)
	}
	var r Range
	for k := range rows {
		r = k
		break
	}
	opt := WriteOptions{wrap: func(w io.Writer) io.Writer { return &failAfter{w: w, n: 100} }}
	_, _, err = WriteRange(l, r, rows[r], opt)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), FileName(r)) {
		t.Fatalf("err = %v, want the injected failure naming %s", err, FileName(r))
	}
	ents, _ := os.ReadDir(l.ChainDir())
	if len(ents) != 0 {
		t.Fatalf("a failed write left %v", ents)
	}
	// A good file, then a failed rewrite: the good file stays as it was.
	p, _, err := WriteRange(l, r, rows[r], WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(p)
	if _, _, err := WriteRange(l, r, rows[r], opt); !errors.Is(err, errInjected) {
		t.Fatalf("err = %v", err)
	}
	after, _ := os.ReadFile(p)
	ents, _ = os.ReadDir(l.ChainDir())
	if !bytes.Equal(good, after) || len(ents) != 1 {
		t.Fatalf("a failed rewrite changed the range's file or left files: %v", ents)
	}
}

func TestStaleTempRemovedOnRerun(t *testing.T) {
	srcs := exampleSources(t)
	dir := t.TempDir()
	l := Layout{Dir: dir, Chain: "mainnet", RangeSize: 1000}
	var sum Summary
	rows, err := Analyse(context.Background(), l, srcs, IngestOptions{}, &sum)
	if err != nil {
		t.Fatal(err)
	}
	for r := range rows {
		// What a killed writer leaves: a temporary file, no final one.
		os.MkdirAll(l.ChainDir(), 0o755)
		stale := filepath.Join(l.ChainDir(), "."+FileName(r)+".12345.tmp")
		if err := os.WriteFile(stale, []byte("PAR1 half"), 0o600); err != nil {
			t.Fatal(err)
		}
		if fs, _ := Files(dir); len(fs) != 0 {
			t.Fatalf("a temporary file is listed as a range: %v", fs)
		}
		if _, _, err := WriteRange(l, r, rows[r], WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(stale); !os.IsNotExist(err) {
			t.Fatalf("the stale temporary file is still there: %v", err)
		}
		break
	}
}

func TestRerunIsByteIdentical(t *testing.T) {
	srcs := exampleSources(t)
	dir := t.TempDir()
	l := Layout{Dir: dir, Chain: "mainnet", RangeSize: 1000}
	s1, err := Ingest(context.Background(), l, srcs, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := map[string][]byte{}
	for _, f := range s1.Files {
		first[f], _ = os.ReadFile(f)
	}
	s2, err := Ingest(context.Background(), l, srcs, IngestOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s1.Files, s2.Files) {
		t.Fatalf("files %v then %v", s1.Files, s2.Files)
	}
	for _, f := range s2.Files {
		b, _ := os.ReadFile(f)
		if !bytes.Equal(b, first[f]) {
			t.Errorf("%s differs on a rerun", f)
		}
	}
}

func TestShardsSplitRanges(t *testing.T) {
	srcs := exampleSources(t)
	l := Layout{Dir: t.TempDir(), Chain: "mainnet", RangeSize: 10}
	all, err := Ingest(context.Background(), l, srcs, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Files) < 3 {
		t.Fatalf("only %d ranges: the test needs several", len(all.Files))
	}
	sharded := Layout{Dir: t.TempDir(), Chain: "mainnet", RangeSize: 10}
	seen := map[string]int{}
	total := 0
	for i := uint64(0); i < 3; i++ {
		s, err := Ingest(context.Background(), sharded, srcs, IngestOptions{Shard: Shard{I: i, N: 3}})
		if err != nil {
			t.Fatal(err)
		}
		total += s.Rows
		for _, f := range s.Files {
			seen[filepath.Base(f)]++
			r, _ := ParseFileName(filepath.Base(f))
			if sharded.Index(r)%3 != i {
				t.Errorf("shard %d/3 wrote %s", i, f)
			}
		}
	}
	if total != all.Rows || len(seen) != len(all.Files) {
		t.Fatalf("shards wrote %d rows in %d files, unsharded %d in %d", total, len(seen), all.Rows, len(all.Files))
	}
	for _, f := range all.Files {
		b := filepath.Base(f)
		if seen[b] != 1 {
			t.Errorf("%s written by %d shards", b, seen[b])
		}
		x, _ := os.ReadFile(f)
		y, _ := os.ReadFile(filepath.Join(sharded.ChainDir(), b))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the sharded and unsharded runs", b)
		}
	}
}

func TestLayout(t *testing.T) {
	l := Layout{Dir: "/x", Chain: "mainnet", RangeSize: 1000}
	r := l.RangeOf(11017123)
	if r != (Range{11017000, 11017999}) || l.Path(r) != "/x/chain=mainnet/blocks-000011017000-000011017999.parquet" {
		t.Fatalf("%v %s", r, l.Path(r))
	}
	if got, ok := ParseFileName(FileName(r)); !ok || got != r {
		t.Fatalf("parse %v", got)
	}
	if rs := l.Ranges(999, 2000); len(rs) != 3 || rs[0].First != 0 || rs[2].Last != 2999 {
		t.Fatalf("ranges %v", rs)
	}
	for _, bad := range []string{"1/1", "x/2", "3", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("shard %q accepted", bad)
		}
	}
	if err := (Layout{Dir: "/x", Chain: "Main Net", RangeSize: 1}).Check(); err == nil {
		t.Error("a chain name with a space accepted")
	}
	if _, _, err := WriteRange(l, Range{5, 1004}, nil, WriteOptions{}); err == nil {
		t.Error("an unaligned range accepted")
	}
}

// The file of a range does not depend on the order its rows came in, nor
// on repeated transactions.
func TestRangeFileIndependentOfRowOrder(t *testing.T) {
	srcs := exampleSources(t)
	l := Layout{Dir: t.TempDir(), Chain: "mainnet", RangeSize: 1000}
	var sum Summary
	rows, err := Analyse(context.Background(), l, srcs, IngestOptions{}, &sum)
	if err != nil {
		t.Fatal(err)
	}
	for r, rs := range rows {
		if len(rs) < 2 {
			continue
		}
		p, w1, err := WriteRange(l, r, slices.Clone(rs), WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first, _ := os.ReadFile(p)
		rev := slices.Clone(rs)
		slices.Reverse(rev)
		rev = append(rev, rs[0], rs[len(rs)-1]) // repeated
		_, w2, err := WriteRange(l, r, rev, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		again, _ := os.ReadFile(p)
		if len(w1) != len(w2) || !bytes.Equal(first, again) {
			t.Fatalf("range %v: %d rows then %d; files equal %v", r, len(w1), len(w2), bytes.Equal(first, again))
		}
		return
	}
	t.Fatal("no range with two rows")
}

// A writer killed mid-range (SIGKILL, no cleanup) leaves no range file,
// only its temporary file, which no *.parquet glob reads; the rerun
// removes it and writes the range.
func TestKilledWriterLeavesNoRangeFile(t *testing.T) {
	if dir := os.Getenv("FLOWQ_LAKE_KILL_CHILD"); dir != "" {
		srcs := exampleSources(t)
		l := Layout{Dir: dir, Chain: "mainnet", RangeSize: 1000}
		var sum Summary
		rows, _ := Analyse(context.Background(), l, srcs, IngestOptions{}, &sum)
		for r, rs := range rows {
			WriteRange(l, r, rs, WriteOptions{wrap: func(w io.Writer) io.Writer { return &stallAfter{w: w, n: 200} }})
		}
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestKilledWriterLeavesNoRangeFile$")
	cmd.Env = append(os.Environ(), "FLOWQ_LAKE_KILL_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	chainDir := filepath.Join(dir, "chain=mainnet")
	deadline := time.Now().Add(30 * time.Second)
	var tmps []string
	for time.Now().Before(deadline) {
		tmps, _ = filepath.Glob(filepath.Join(chainDir, ".*.tmp"))
		if len(tmps) > 0 {
			if st, err := os.Stat(tmps[0]); err == nil && st.Size() >= 200 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if len(tmps) == 0 {
		t.Fatal("the child wrote no temporary file")
	}
	if fs, _ := Files(dir); len(fs) != 0 {
		t.Fatalf("a killed writer left range files: %v", fs)
	}
	s, err := Ingest(context.Background(), Layout{Dir: dir, Chain: "mainnet", RangeSize: 1000}, exampleSources(t), IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(chainDir, ".*.tmp")); len(left) != 0 {
		t.Fatalf("the rerun left temporary files: %v", left)
	}
	if fs, _ := Files(dir); len(fs) != len(s.Files) || len(fs) == 0 {
		t.Fatalf("after the rerun: %v", fs)
	}
}

// stallAfter writes n bytes, then blocks for ever (the process is killed).
type stallAfter struct {
	w io.Writer
	n int
}

func (s *stallAfter) Write(p []byte) (int, error) {
	if len(p) >= s.n {
		s.w.Write(p[:s.n])
		s.n = 0
		time.Sleep(time.Hour) // until killed
	}
	s.n -= len(p)
	return s.w.Write(p)
}

// Every hash and address column carries a Bloom filter holding its values
// (as parquet-go reads it back: xxhash64 of the plain bytes, the spec's
// split-block filter); a value not in the file is (here) not in it.
func TestBloomFiltersHoldTheValues(t *testing.T) {
	l := Layout{Dir: t.TempDir(), Chain: "mainnet", RangeSize: 1000}
	sum, err := Ingest(context.Background(), l, exampleSources(t), IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := sum.Files[len(sum.Files)-1]
	rows, _ := ReadRange(path)
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]string{}
	for _, r := range rows {
		values["tx_hash"] = append(values["tx_hash"], r.TxHash)
		values["hash_shape"] = append(values["hash_shape"], r.HashShape)
		values["bot"] = append(values["bot"], r.Bot)
		values["addresses"] = append(values["addresses"], r.Addresses...)
	}
	checked := 0
	for _, rg := range pf.RowGroups() {
		for i, col := range pf.Schema().Columns() {
			want := values[col[0]]
			if want == nil {
				continue
			}
			bf := rg.ColumnChunks()[i].BloomFilter()
			if bf == nil {
				t.Fatalf("column %v has no Bloom filter", col)
			}
			for _, v := range want {
				ok, err := bf.Check(parquet.ByteArrayValue([]byte(v)))
				if err != nil || !ok {
					t.Fatalf("column %v: %s not in its Bloom filter (%v)", col, v, err)
				}
				checked++
			}
			absent := "0x" + strings.Repeat("ab", (len(want[0])-2)/2)
			if ok, _ := bf.Check(parquet.ByteArrayValue([]byte(absent))); ok {
				t.Errorf("column %v: a value not in the file passes its filter", col)
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}
