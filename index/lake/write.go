package lake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// WriteOptions configure a range file. Zero values take the defaults.
type WriteOptions struct {
	// RowGroupRows is the most rows of a row group (default 16,384): the
	// unit an engine skips by the block statistics and Bloom filters.
	RowGroupRows int64

	// wrap, in tests, wraps the temporary file (fault injection).
	wrap func(io.Writer) io.Writer
}

// bloomColumns are the columns given a Bloom filter: the hashes and the
// addresses, whose lookups (a transaction, a shape, a bot, an address
// touched) are needles in a range.
var bloomColumns = [][]string{
	{"tx_hash"}, {"hash_exact"}, {"hash_shape"}, {"hash_tokens"}, {"hash_family"},
	{"from_address"}, {"to_address"}, {"bot"},
	{"addresses", "list", "element"}, {"token_addresses", "list", "element"},
}

func writerOptions(opt WriteOptions) []parquet.WriterOption {
	rg := opt.RowGroupRows
	if rg <= 0 {
		rg = 16384
	}
	var blooms []parquet.BloomFilterColumn
	for _, p := range bloomColumns {
		blooms = append(blooms, parquet.SplitBlockFilter(10, p...))
	}
	return []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(rg),
		parquet.BloomFilters(blooms...),
		parquet.CreatedBy("flowq", "lake-"+SchemaVersion, "-"),
		parquet.KeyValueMetadata("flowq.lake.schema", SchemaVersion),
	}
}

// WriteRange writes the rows of range r (every row's block must be in it)
// as the range's file, replacing any file of the range: sorted by block and
// position, one row per transaction hash (Dedupe), into a temporary file in the same directory (a name starting
// with '.' and ending in '.tmp', which no *.parquet glob reads), synced,
// renamed over the final name, and the directory synced. On any error the
// temporary file is removed and an earlier file of the range is left as it
// was. Temporary files a killed writer left for the range are removed
// first. rows is sorted in place; the rows written are returned.
func WriteRange(l Layout, r Range, rows []Row, opt WriteOptions) (path string, written []Row, err error) {
	if err := l.Check(); err != nil {
		return "", nil, err
	}
	if r != l.RangeOf(r.First) {
		return "", nil, fmt.Errorf("lake: blocks %d..%d are not a range of %d blocks", r.First, r.Last, l.RangeSize)
	}
	for i := range rows {
		if b := rows[i].Block; b < r.First || b > r.Last {
			return "", nil, fmt.Errorf("lake: a row of block %d given for range %d..%d", b, r.First, r.Last)
		}
		if rows[i].Chain != l.Chain {
			return "", nil, fmt.Errorf("lake: a row of chain %q given for chain %q", rows[i].Chain, l.Chain)
		}
	}
	rows = Dedupe(rows)
	dir := l.ChainDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("lake: %w", err)
	}
	final := l.Path(r)
	prefix := "." + FileName(r) + "."
	removeStale(dir, prefix)
	f, err := os.CreateTemp(dir, prefix+"*.tmp")
	if err != nil {
		return "", nil, fmt.Errorf("lake: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("lake: writing %s: %w", final, err)
		}
	}()
	var w io.Writer = f
	if opt.wrap != nil {
		w = opt.wrap(f)
	}
	pw := parquet.NewGenericWriter[Row](w, writerOptions(opt)...)
	const chunk = 1024
	for i := 0; i < len(rows); i += chunk {
		if _, err = pw.Write(rows[i:min(i+chunk, len(rows))]); err != nil {
			return "", nil, err
		}
	}
	if err = pw.Close(); err != nil {
		return "", nil, err
	}
	if err = f.Sync(); err != nil {
		return "", nil, err
	}
	if err = f.Close(); err != nil {
		return "", nil, err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return "", nil, err
	}
	if err = os.Rename(tmp, final); err != nil {
		return "", nil, err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // the rename is durable once the directory is
		d.Close()
	}
	return final, rows, nil
}

// Dedupe sorts rows in the order of a range file and keeps one row per
// transaction hash: the first in that order (by block and position, then
// a traced row before a receipts one, a row with costs before one
// without, then the normal form's bytes), so that the file does not
// depend on the order the rows came in. A hash is a transaction's
// identity on a chain; only inputs that repeat a transaction (two bundles
// of one block, a test's scenarios) have duplicates.
func Dedupe(rows []Row) []Row {
	sort.Slice(rows, func(i, j int) bool { return before(&rows[i], &rows[j]) })
	seen := make(map[string]bool, len(rows))
	out := rows[:0]
	for _, r := range rows {
		if !seen[r.TxHash] {
			seen[r.TxHash] = true
			out = append(out, r)
		}
	}
	return out
}

// before is the total order of Dedupe.
func before(a, b *Row) bool {
	if less(a, b) || less(b, a) {
		return less(a, b)
	}
	if a.Mode != b.Mode {
		return a.Mode == "traces"
	}
	if a.CostsKnown != b.CostsKnown {
		return a.CostsKnown
	}
	return bytes.Compare(a.NF, b.NF) < 0
}

// removeStale removes the temporary files of a range a killed writer left.
func removeStale(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// ReadRange reads a range file's rows (in file order), for tests and
// checks; an engine reads the lake in production.
func ReadRange(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := parquet.NewGenericReader[Row](pf)
	defer r.Close()
	out := make([]Row, pf.NumRows())
	n, err := r.Read(out)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out[:n], nil
}
