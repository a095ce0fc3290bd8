//go:build duckdb

// Package duck runs SQL on embedded DuckDB over a lake directory (package
// lake): the view lake is read_parquet('DIR/**/*.parquet',
// hive_partitioning = true). It links DuckDB's static library with cgo, so
// it builds only with the duckdb build tag (go build -tags duckdb): the
// default build of flowq stays quick on a fresh machine.
package duck

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver

	"github.com/flowq/flowq/index/lake"
)

// DB is DuckDB in memory with the view lake over a lake directory.
type DB struct {
	db    *sql.DB
	dir   string
	files []string // nil: the glob; else the files kept after a corrupt one

	// OnSkip, when set, is called before a statement's first row with the
	// range files Query leaves out of it (unreadable), so that a caller
	// can say the answer is partial before it prints the rows.
	OnSkip func([]*FileError)

	// footers remembers each range file's footer check by its size and
	// modification time: a file is opened again only when it changed.
	footers map[string]footerCheck
}

type footerCheck struct {
	size   int64
	mod    time.Time
	err    error
	schema string // flowq.lake.schema of a file whose frame is whole
}

// SchemaError is a lake whose range files were written with another lake
// schema than this flowq reads (lake.SchemaVersion): the statement is
// refused, not answered from the other files.
type SchemaError struct {
	Path   string // the first such file
	Schema string // its schema ("" when its metadata names none)
	More   int    // further files of other schemas
}

func (e *SchemaError) Error() string {
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" (and %d more files)", e.More)
	}
	if e.Schema == "" {
		return fmt.Sprintf("lake file %s%s: its metadata names no flowq.lake.schema (not written by flowq ingest --lake): this flowq reads lake schema %s", e.Path, more, lake.SchemaVersion)
	}
	return fmt.Sprintf("lake file %s%s has lake schema %s; this flowq reads schema %s (schema 3: normal forms in encoding version 6; schema 2: balances name each token's standard): write the lake again with flowq ingest --lake (or flowq export --format parquet)", e.Path, more, e.Schema, lake.SchemaVersion)
}

// FileError is a range file DuckDB could not read.
type FileError struct {
	Path string
	Err  error
	// Chain and Range are the chain (its chain=NAME directory) and the
	// blocks (its name) the file holds; Ranged is false for a file whose
	// name is not a range file's.
	Chain  string
	Range  lake.Range
	Ranged bool
}

func newFileError(path string, err error) *FileError {
	e := &FileError{Path: path, Err: err}
	e.Range, e.Ranged = lake.ParseFileName(filepath.Base(path))
	e.Chain, _ = strings.CutPrefix(filepath.Base(filepath.Dir(path)), "chain=")
	return e
}

func (e *FileError) Error() string {
	msg, _, _ := strings.Cut(e.Err.Error(), "\n") // DuckDB's message, without its caret lines
	return fmt.Sprintf("lake file %s: %s", e.Path, msg)
}
func (e *FileError) Unwrap() error { return e.Err }

// Missing names what an answer without the file lacks: "blocks A..B of
// chain C" (or the file, when its name is not a range file's).
func (e *FileError) Missing() string {
	if !e.Ranged {
		return "the rows of " + e.Path
	}
	s := fmt.Sprintf("blocks %d..%d", e.Range.First, e.Range.Last)
	if e.Chain != "" {
		s += " of chain " + e.Chain
	}
	return s
}

// Open opens DuckDB over the lake at dir (which must hold at least one
// range file).
func Open(dir string) (*DB, error) {
	files, err := lake.Files(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("lake %s: no range files (*.parquet under chain=NAME/)", dir)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	db.SetMaxOpenConns(1) // one in-memory database: the view lives on its connection
	return &DB{db: db, dir: dir}, nil
}

// Close closes DuckDB.
func (d *DB) Close() error { return d.db.Close() }

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Source is the read_parquet call of the view: the lake's glob, or the
// files kept.
func (d *DB) Source() string {
	arg := quote(filepath.ToSlash(filepath.Join(d.dir, "**", "*.parquet")))
	if d.files != nil {
		q := make([]string, len(d.files))
		for i, f := range d.files {
			q[i] = quote(filepath.ToSlash(f))
		}
		arg = "[" + strings.Join(q, ", ") + "]"
	}
	return "read_parquet(" + arg + ", hive_partitioning = true)"
}

func (d *DB) view(ctx context.Context, files []string) error {
	d.files = files
	if _, err := d.db.ExecContext(ctx, "CREATE OR REPLACE VIEW lake AS SELECT * FROM "+d.Source()); err != nil {
		return err
	}
	return nil
}

// Result is what Query did besides the rows: the files it left out because
// DuckDB could not read them (the other ranges answered).
type Result struct {
	Columns []string
	Rows    int
	Skipped []*FileError
}

// Query runs a statement over the view lake and calls fn with each row
// (values as database/sql scans them: BLOB []byte, UBIGINT uint64, LIST
// []any, STRUCT map[string]any). Every range file's frame is checked
// first (openFooter: the magic bytes at both ends, the footer length), and
// a file cut short or not Parquet at all is left out of the view before
// the statement runs. When the view or the statement still fails before
// any row was given and a range file is unreadable, the files are read one
// by one, the unreadable ones are left out of the view and the statement
// runs over the others. Result.Skipped names the files left out; OnSkip
// hears of them before the first row. The next Query tries the whole lake
// again. An error from fn stops the query and is returned.
func (d *DB) Query(ctx context.Context, stmt string, fn func(cols []string, vals []any) error) (Result, error) {
	skipped, err := d.checkFooters()
	if err != nil {
		return Result{}, err
	}
	var keep []string // nil: the glob
	if len(skipped) > 0 {
		if keep, err = d.keep(skipped); err != nil {
			return Result{Skipped: skipped}, err
		}
	}
	if err := d.view(ctx, keep); err != nil {
		bad, xerr := d.exclude(ctx)
		if xerr != nil || len(bad) == 0 {
			return Result{Skipped: bad}, errors.Join(err, xerr)
		}
		skipped = bad
	}
	d.notify(skipped, nil)
	res, given, err := d.run(ctx, stmt, fn)
	if err != nil && given == 0 && !errors.Is(err, errCallback) && ctx.Err() == nil {
		bad, xerr := d.exclude(ctx)
		switch {
		case xerr != nil:
			err = errors.Join(err, xerr)
		case len(bad) > len(skipped):
			d.notify(bad, skipped)
			skipped = bad
			res, _, err = d.run(ctx, stmt, fn)
		}
	}
	res.Skipped = skipped
	if err != nil && !errors.Is(err, errCallback) {
		err = fmt.Errorf("lake %s: %w", d.dir, err)
	}
	return res, unwrapCallback(err)
}

// notify tells OnSkip of the files of bad not in before.
func (d *DB) notify(bad, before []*FileError) {
	if d.OnSkip == nil || len(bad) == 0 {
		return
	}
	told := map[string]bool{}
	for _, b := range before {
		told[b.Path] = true
	}
	var fresh []*FileError
	for _, b := range bad {
		if !told[b.Path] {
			fresh = append(fresh, b)
		}
	}
	if len(fresh) > 0 {
		d.OnSkip(fresh)
	}
}

// checkFooters checks every range file's frame (openFooter; again only for
// a file whose size or modification time changed) and returns the files
// that fail.
func (d *DB) checkFooters() ([]*FileError, error) {
	files, err := lake.Files(d.dir)
	if err != nil {
		return nil, err
	}
	if d.footers == nil {
		d.footers = map[string]footerCheck{}
	}
	var bad []*FileError
	var old *SchemaError
	seen := map[string]bool{}
	for _, f := range files {
		seen[f] = true
		st, err := os.Stat(f)
		if err != nil {
			bad = append(bad, newFileError(f, err))
			continue
		}
		c, ok := d.footers[f]
		if !ok || c.size != st.Size() || !c.mod.Equal(st.ModTime()) {
			c = footerCheck{size: st.Size(), mod: st.ModTime()}
			c.schema, c.err = openFooter(f, st.Size())
			d.footers[f] = c
		}
		switch {
		case c.err != nil:
			bad = append(bad, newFileError(f, c.err))
		case c.schema != lake.SchemaVersion && old == nil:
			old = &SchemaError{Path: f, Schema: c.schema}
		case c.schema != lake.SchemaVersion:
			old.More++
		}
	}
	for f := range d.footers {
		if !seen[f] {
			delete(d.footers, f)
		}
	}
	if old != nil {
		return nil, old
	}
	return bad, nil
}

// openFooter checks a Parquet file's frame: "PAR1" at both ends, and a
// footer length that fits in the file (the last 8 bytes), and returns the
// lake schema its footer's key-value metadata names (flowq.lake.schema;
// "" when none), found in the footer's last bytes (footerTail), where
// the metadata is, after the row groups. Three small reads, so that a lake
// of thousands of files is checked in a fraction of DuckDB's own scan; it
// finds a file cut short or not Parquet at all. A footer that frames right
// but does not decode is DuckDB's to find (Query's full read).
func openFooter(path string, size int64) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	const magic = "PAR1"
	if size < 12 {
		return "", fmt.Errorf("not a whole Parquet file: %d bytes", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := fh.ReadAt(head[:], 0); err != nil {
		return "", fmt.Errorf("not a whole Parquet file (%d bytes): %w", size, err)
	}
	if _, err := fh.ReadAt(tail[:], size-8); err != nil {
		return "", fmt.Errorf("not a whole Parquet file (%d bytes): %w", size, err)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	switch {
	case string(head[:]) != magic:
		return "", fmt.Errorf("not a Parquet file (%d bytes): it starts with %q, not %q", size, head[:], magic)
	case string(tail[4:]) != magic:
		return "", fmt.Errorf("not a whole Parquet file (%d bytes, cut short?): it ends with %q, not %q", size, tail[4:], magic)
	case n+12 > size:
		return "", fmt.Errorf("not a whole Parquet file (%d bytes): its footer says %d bytes", size, n)
	}
	m := min(n, footerTail)
	buf := make([]byte, m)
	if _, err := fh.ReadAt(buf, size-8-m); err != nil {
		return "", fmt.Errorf("the Parquet footer (%d bytes): %w", n, err)
	}
	return schemaOf(buf), nil
}

// footerTail is how many of a footer's last bytes openFooter reads: the
// key-value metadata and created_by (about 100 bytes in flowq's files)
// follow the row groups.
const footerTail = 4096

// schemaKey is the Thrift compact encoding of the KeyValue's key
// "flowq.lake.schema" (its length, 17, then the bytes) and the header of
// the value's field (field 2, binary: 0x18).
const schemaKey = "\x11flowq.lake.schema\x18"

// schemaOf finds the value of flowq.lake.schema in the encoded footer's
// bytes b ("" when absent): after schemaKey, a one-byte length and the
// value.
func schemaOf(b []byte) string {
	i := bytes.LastIndex(b, []byte(schemaKey))
	if i < 0 {
		return ""
	}
	rest := b[i+len(schemaKey):]
	if len(rest) == 0 || rest[0] >= 0x80 || int(rest[0]) >= len(rest) {
		return ""
	}
	return string(rest[1 : 1+rest[0]])
}

// keep is the lake's files without the bad ones; an error when none is
// left.
func (d *DB) keep(bad []*FileError) ([]string, error) {
	isBad := map[string]bool{}
	for _, b := range bad {
		isBad[b.Path] = true
	}
	all, err := lake.Files(d.dir)
	if err != nil {
		return nil, err
	}
	var keep []string
	for _, f := range all {
		if !isBad[f] {
			keep = append(keep, f)
		}
	}
	if len(keep) == 0 {
		return nil, errors.Join(asErrors(bad)...)
	}
	return keep, nil
}

// exclude reads every range file and points the view at the readable
// ones; it returns the unreadable ones (none: the view is left as it was).
func (d *DB) exclude(ctx context.Context) ([]*FileError, error) {
	bad, err := d.check(ctx)
	if err != nil || len(bad) == 0 {
		return nil, err
	}
	keep, err := d.keep(bad)
	if err != nil {
		return bad, err
	}
	return bad, d.view(ctx, keep)
}

func asErrors(fs []*FileError) []error {
	out := make([]error, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

var errCallback = errors.New("callback")

type callbackErr struct{ err error }

func (c *callbackErr) Error() string        { return c.err.Error() }
func (c *callbackErr) Is(target error) bool { return target == errCallback }

func unwrapCallback(err error) error {
	var c *callbackErr
	if errors.As(err, &c) {
		return c.err
	}
	return err
}

func (d *DB) run(ctx context.Context, stmt string, fn func([]string, []any) error) (Result, int, error) {
	var res Result
	rows, err := d.db.QueryContext(ctx, stmt)
	if err != nil {
		return res, 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return res, 0, err
	}
	res.Columns = cols
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return res, res.Rows, err
		}
		res.Rows++
		if err := fn(cols, vals); err != nil {
			return res, res.Rows, &callbackErr{err}
		}
	}
	return res, res.Rows, rows.Err()
}

// Check reads every range file whole and returns those DuckDB cannot read.
func (d *DB) Check(ctx context.Context) ([]*FileError, error) { return d.check(ctx) }

func (d *DB) check(ctx context.Context) ([]*FileError, error) {
	files, err := lake.Files(d.dir)
	if err != nil {
		return nil, err
	}
	var bad []*FileError
	for _, f := range files {
		if err := d.readAll(ctx, f); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			bad = append(bad, newFileError(f, err))
		}
	}
	return bad, nil
}

// readAll reads every value of one file.
func (d *DB) readAll(ctx context.Context, path string) error {
	rows, err := d.db.QueryContext(ctx, "SELECT * FROM read_parquet("+quote(filepath.ToSlash(path))+")")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
	}
	return rows.Err()
}
