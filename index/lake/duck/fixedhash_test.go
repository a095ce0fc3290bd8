//go:build duckdb

package duck

import (
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// fixedRow is a structural hash as FIXED_LEN_BYTE_ARRAY(32), the type the
// issue asks for.
type fixedRow struct {
	N uint64   `parquet:"n"`
	H [32]byte `parquet:"h"`
}

func writeFixed(t *testing.T, bloom bool) (string, []fixedRow) {
	path := filepath.Join(t.TempDir(), "fixed.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(1000)}
	if bloom {
		opts = append(opts, parquet.BloomFilters(parquet.SplitBlockFilter(10, "h")))
	}
	w := parquet.NewGenericWriter[fixedRow](f, opts...)
	var rows []fixedRow
	for i := range 3000 {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		rows = append(rows, fixedRow{N: uint64(i), H: sha256.Sum256(b[:])})
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, rows
}

// TestFixedLenHashBloomBugOnThisDuckDB is why the lake's hashes are hex
// strings (ARCHITECTURE.md, "Hashes and addresses are strings"): on the
// DuckDB this module builds (1.5.6), a 32-byte FIXED_LEN_BYTE_ARRAY column
// with parquet-go's Bloom filter, looked up by equality with a BLOB
// constant, answers no rows (the probe excludes every row group holding
// the value: duckdb/duckdb#23829), while the same file without the filter
// finds each value and a prefix range finds them with it. When this test
// fails on its first check, the DuckDB linked has the fix: the lake can
// move to 32-byte hashes (a schema version bump).
func TestFixedLenHashBloomBugOnThisDuckDB(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version string
	if err := db.QueryRow("SELECT version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	withBloom, rows := writeFixed(t, true)
	without, _ := writeFixed(t, false)
	var typ string
	if err := db.QueryRow(fmt.Sprintf("SELECT type FROM parquet_schema('%s') WHERE name = 'h'", withBloom)).Scan(&typ); err != nil || typ != "FIXED_LEN_BYTE_ARRAY" {
		t.Fatalf("column h is %q (%v), want FIXED_LEN_BYTE_ARRAY", typ, err)
	}
	picks := []int{0, 1, 999, 1000, 1500, 2999}
	found, foundPlain, foundPrefix := 0, 0, 0
	for _, i := range picks {
		h := hex.EncodeToString(rows[i].H[:])
		eq := "SELECT count(*) FROM read_parquet('%s') WHERE h = from_hex('" + h + "')"
		found += count(fmt.Sprintf(eq, withBloom))
		foundPlain += count(fmt.Sprintf(eq, without))
		p, _ := strconv.ParseUint(h[:6], 16, 32)
		if count(fmt.Sprintf("SELECT count(*) FROM read_parquet('%s') WHERE h >= from_hex('%s') AND h < from_hex('%06x')", withBloom, h[:6], p+1)) >= 1 {
			foundPrefix++
		}
	}
	t.Logf("%s: of %d hashes, equality found %d with the Bloom filter, %d without; a 6-digit prefix range found %d with it", version, len(picks), found, foundPlain, foundPrefix)
	if found != 0 {
		t.Errorf("%s finds %d of %d 32-byte hashes by equality through a Bloom filter: the bug is fixed in this DuckDB, and the lake can store hashes as FIXED_LEN_BYTE_ARRAY(32) (bump lake.SchemaVersion)", version, found, len(picks))
	}
	if foundPlain != len(picks) || foundPrefix != len(picks) {
		t.Errorf("without the filter equality found %d, with it a prefix range %d, of %d: the lookups themselves fail", foundPlain, foundPrefix, len(picks))
	}
}
