package ingest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// cryo's Parquet datasets (https://github.com/paradigmxyz/cryo).
//
// cryo writes one file per dataset and block range, named
// NETWORK__DATASET__START_to_END.parquet (ethereum__logs__00011017000_to_00011017999.parquet).
// A directory given to ingest is searched for such files; the logs,
// transactions and blocks files of one range make one input, named
// "cryo:DIR/NETWORK__*__START_to_END.parquet". Loading it reads the three
// files, joins them by block number and transaction index, and gives the
// decoder what `flowq fetch --mode receipts` saves, one bundle per block:
// the block with its full transactions (from the transactions dataset),
// and receipts (transaction, status from `success`, gas from `gas_used`,
// price from `gas_price`, the transaction's logs) when the transactions
// dataset has those columns, else the block's logs (the eth_getLogs
// shape: costs unknown). So a range without traces is analysed in
// receipts-only mode, as its JSON receipts would be. A traces
// (call_traces) dataset of the same range, when there is one, gives each
// bundle trace_block's frames too (cryotraces.go), and the range is
// analysed from its traces, in the Parity shape.
//
// Column names and types are cryo's own (crates/freeze/src/datasets/
// logs.rs, transactions.rs, blocks.rs): integers as cryo writes them
// (u32 or u64; older versions i32), hashes and addresses as binary, U256
// columns (a transaction's value) as `value_binary` (32 bytes, big-endian)
// or `value_string` (decimal), cryo's --u256-types; a value given only as
// `value_f64` is refused (it is rounded). Older cryo names (`value`,
// `contract_address`, blocks' `number` and `hash`) are read too.

// cryoFile matches a cryo output file's name.
var cryoFile = regexp.MustCompile(`^(.+)__(logs|events|transactions|txs|blocks|traces|call_traces)__([0-9]+)_to_([0-9]+)\.parquet$`)

// cryoDataset names a dataset by cryo's main name (its aliases folded).
func cryoDataset(s string) string {
	switch s {
	case "events":
		return "logs"
	case "txs":
		return "transactions"
	case "call_traces":
		return "traces"
	}
	return s
}

// cryoRange is one block range of one network: its files by dataset.
type cryoRange struct {
	dir, prefix, start, end string
	files                   map[string]string // dataset → path
}

func (c *cryoRange) name() string {
	return "cryo:" + filepath.Join(absName(c.dir), c.prefix+"__*__"+c.start+"_to_"+c.end+".parquet")
}

func (c *cryoRange) fileName(ds string) string {
	return c.prefix + "__" + ds + "__" + c.start + "_to_" + c.end + ".parquet"
}

// IsCryoName reports whether an input name is a cryo range's.
func IsCryoName(name string) bool { return strings.HasPrefix(name, "cryo:") }

// findCryo returns the cryo ranges of the *.parquet files directly in dir
// or below, in order of network and range; a range without its logs,
// transactions or blocks file is an error naming the file that is there
// and the one missing (with the ranges the missing dataset has, when its
// files cut the blocks differently).
func findCryo(dir string) ([]*cryoRange, error) {
	byKey := map[string]*cryoRange{}
	var keys []string
	err := filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		m := cryoFile.FindStringSubmatch(d.Name())
		if m == nil {
			return nil
		}
		key := filepath.Join(filepath.Dir(q), m[1]) + "\x00" + m[3] + "\x00" + m[4]
		c := byKey[key]
		if c == nil {
			c = &cryoRange{dir: filepath.Dir(q), prefix: m[1], start: m[3], end: m[4], files: map[string]string{}}
			byKey[key] = c
			keys = append(keys, key)
		}
		c.files[cryoDataset(m[2])] = q
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(keys)
	var out []*cryoRange
	for _, k := range keys {
		c := byKey[k]
		for _, ds := range []string{"logs", "transactions", "blocks"} {
			if c.files[ds] != "" {
				continue
			}
			var have string
			for _, d := range []string{"logs", "transactions", "blocks", "traces"} {
				if c.files[d] != "" {
					have = c.files[d]
					break
				}
			}
			other := otherRanges(byKey, c, ds)
			msg := fmt.Sprintf("%s: no %s dataset for the same block range (no %s beside it)", have, ds, c.fileName(ds))
			if other != "" {
				msg += "; the " + ds + " files cover " + other + ": the datasets' block ranges do not match (run cryo with the same --blocks and --chunk-size for every dataset)"
			} else {
				msg += "; flowq reads cryo's logs, transactions and blocks together: cryo logs transactions blocks --blocks A:B --output-dir DIR"
			}
			return nil, fmt.Errorf("%s", msg)
		}
		out = append(out, c)
	}
	return out, nil
}

// otherRanges lists the ranges that dataset ds has in c's directory and
// network.
func otherRanges(all map[string]*cryoRange, c *cryoRange, ds string) string {
	var rs []string
	for _, o := range all {
		if o.dir == c.dir && o.prefix == c.prefix && o.files[ds] != "" {
			rs = append(rs, o.start+"_to_"+o.end)
		}
	}
	sort.Strings(rs)
	return strings.Join(rs, ", ")
}

// cryoInputs are the inputs of the cryo ranges under dir.
func cryoInputs(dir string) ([]Input, error) {
	rs, err := findCryo(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Input, len(rs))
	for i, c := range rs {
		out[i] = Input{Name: c.name(), Load: c.load}
	}
	return out, nil
}

// cryoInput is the input named name ("cryo:DIR/NETWORK__*__A_to_B.parquet"),
// found again on disk (for --retry-failed).
func cryoInput(name string) Input {
	return Input{Name: name, Load: func(max int) ([]byte, error) {
		p := strings.TrimPrefix(name, "cryo:")
		dir, base := filepath.Split(p)
		m := cryoFile.FindStringSubmatch(strings.Replace(base, "__*__", "__logs__", 1))
		if m == nil || !strings.Contains(base, "__*__") {
			return nil, fmt.Errorf("%s: not a cryo range's name", name)
		}
		c := &cryoRange{dir: filepath.Clean(dir), prefix: m[1], start: m[3], end: m[4], files: map[string]string{}}
		// The files as they are now (a dataset's alias, a traces file
		// added since); those missing are named by load.
		if entries, err := os.ReadDir(c.dir); err == nil {
			for _, e := range entries {
				f := cryoFile.FindStringSubmatch(e.Name())
				if f != nil && f[1] == c.prefix && f[3] == c.start && f[4] == c.end {
					c.files[cryoDataset(f[2])] = filepath.Join(c.dir, e.Name())
				}
			}
		}
		return c.load(max)
	}}
}

// --- reading a table ------------------------------------------------------------

// cryoTable is a Parquet file read whole: its rows, by column name.
type cryoTable struct {
	path string
	cols map[string]int
	typ  map[string]parquet.Type
	rows [][]parquet.Value // rows[i][column index]
}

// What a decoded row holds beyond its byte arrays: a parquet.Value a
// column, and the row's slice header in the table.
const (
	cryoValueSize = int64(unsafe.Sizeof(parquet.Value{}))
	cryoRowSize   = int64(unsafe.Sizeof([]parquet.Value{}))
)

// The rows a range's files (three, four with traces) decode to are
// bounded as the files are (left, from cryoRowBudget): a Parquet file's
// columns can be dictionary- and run-length-encoded, then compressed, so
// a logs file of 542 kB declared two million copies of one log, and the
// range's load allocated 9.2 GB before its bundle was refused
// (TestCryoRowsBounded); ten times as many rows would not fit in memory.
// The bundle is then built from the rows (a map of the logs, and its
// JSON), so the rows may take half of the input's limit. A row group's
// declared rows are checked before it is read, the values' bytes as
// they are.
func cryoRowBudget(max int) *int64 {
	if max <= 0 {
		return nil // no limit
	}
	b := int64(max) / 2
	return &b
}

func rowsOver(path string, max int) error {
	return fmt.Errorf("%s: the range's rows decode to more than %d bytes, half the limit of an input (flowq --max-bytes %d)", path, max/2, max)
}

// readCryoTable reads a Parquet file of at most max bytes, its decoded
// rows taken from left (nil: no limit).
func readCryoTable(path string, max int, left *int64) (t *cryoTable, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%s: not a readable Parquet file (%v)", path, r)
		}
	}()
	b, err := ReadRegularFile(path, max)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%s: missing (cryo's logs, transactions and blocks files of a range are read together)", path)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %v", path, err)
	}
	t = &cryoTable{path: path, cols: map[string]int{}, typ: map[string]parquet.Type{}}
	for i, f := range pf.Schema().Fields() {
		if !f.Leaf() {
			return nil, fmt.Errorf("%s: column %q is nested: not a cryo dataset", path, f.Name())
		}
		t.cols[f.Name()] = i
		t.typ[f.Name()] = f.Type()
	}
	n := len(pf.Schema().Fields())
	buf := make([]parquet.Row, 128)
	rowCost := int64(n)*cryoValueSize + cryoRowSize // a row's cost but its byte arrays
	for _, rg := range pf.RowGroups() {
		if left != nil && rg.NumRows() > *left/rowCost {
			return nil, rowsOver(path, max)
		}
		rows := rg.Rows()
		for {
			k, rerr := rows.ReadRows(buf)
			for _, r := range buf[:k] {
				vals := make([]parquet.Value, n)
				cost := rowCost
				for _, v := range r {
					if c := v.Column(); c >= 0 && c < n {
						vals[c] = v.Clone()
						if k := v.Kind(); !v.IsNull() && (k == parquet.ByteArray || k == parquet.FixedLenByteArray) {
							cost += int64(len(v.ByteArray()))
						}
					}
				}
				t.rows = append(t.rows, vals)
				if left != nil {
					*left -= cost
				}
			}
			if left != nil && *left < 0 {
				rows.Close()
				return nil, rowsOver(path, max)
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: not a readable Parquet file: %v", path, rerr)
			}
		}
		rows.Close()
	}
	return t, nil
}

// col is the index of the first of names the table has, or -1.
func (t *cryoTable) col(names ...string) (int, string) {
	for _, n := range names {
		if i, ok := t.cols[n]; ok {
			return i, n
		}
	}
	return -1, ""
}

func (t *cryoTable) need(names ...string) (int, error) {
	i, _ := t.col(names...)
	if i < 0 {
		return -1, fmt.Errorf("%s: no column %s (cryo writes it by default; was it left out with --exclude-columns?)", t.path, strings.Join(names, " or "))
	}
	return i, nil
}

func (t *cryoTable) bad(row int, col, want string, v parquet.Value) error {
	return fmt.Errorf("%s: row %d: column %s is %v, want %s", t.path, row, col, v.Kind(), want)
}

func (t *cryoTable) name(c int) string {
	for n, i := range t.cols {
		if i == c {
			return n
		}
	}
	return "?"
}

// unsigned says whether column c is an unsigned integer (cryo's u32, u64).
func (t *cryoTable) unsigned(c int) bool {
	lt := t.typ[t.name(c)].LogicalType()
	if lt == nil {
		return false
	}
	it, ok := lt.Value.(*format.IntType)
	return ok && !it.IsSigned
}

// uint reads an integer column (u32, u64, i32, i64); null gives ok false.
func (t *cryoTable) uint(row, c int) (uint64, bool, error) {
	v := t.rows[row][c]
	if v.IsNull() {
		return 0, false, nil
	}
	switch v.Kind() {
	case parquet.Int32:
		if t.unsigned(c) {
			return uint64(uint32(v.Int32())), true, nil
		}
		if v.Int32() < 0 {
			return 0, false, fmt.Errorf("%s: row %d: column %s is negative (%d)", t.path, row, t.name(c), v.Int32())
		}
		return uint64(v.Int32()), true, nil
	case parquet.Int64:
		if t.unsigned(c) {
			return v.Uint64(), true, nil
		}
		if v.Int64() < 0 {
			return 0, false, fmt.Errorf("%s: row %d: column %s is negative (%d)", t.path, row, t.name(c), v.Int64())
		}
		return uint64(v.Int64()), true, nil
	}
	return 0, false, t.bad(row, t.name(c), "an integer", v)
}

// bytesOf reads a binary column of n bytes (n 0: any length); null gives nil.
func (t *cryoTable) bytesOf(row, c, n int) ([]byte, error) {
	v := t.rows[row][c]
	if v.IsNull() {
		return nil, nil
	}
	if v.Kind() != parquet.ByteArray && v.Kind() != parquet.FixedLenByteArray {
		return nil, t.bad(row, t.name(c), "binary", v)
	}
	b := v.ByteArray()
	if n > 0 && len(b) == 0 {
		return nil, nil // an empty address or topic: absent, as null
	}
	if n > 0 && len(b) != n {
		if len(b) == 2+2*n && strings.HasPrefix(string(b), "0x") {
			// cryo --hex writes binary columns as 0x strings.
			d, err := hex.DecodeString(string(b[2:]))
			if err == nil {
				return d, nil
			}
		}
		return nil, fmt.Errorf("%s: row %d: column %s has %d bytes, want %d", t.path, row, t.name(c), len(b), n)
	}
	if n == 0 && strings.HasPrefix(string(b), "0x") && len(b)%2 == 0 {
		if d, err := hex.DecodeString(string(b[2:])); err == nil {
			return d, nil
		}
	}
	return b, nil
}

func hx(b []byte) string  { return "0x" + hex.EncodeToString(b) }
func qty(n uint64) string { return "0x" + strconv.FormatUint(n, 16) }

// --- joining the datasets ---------------------------------------------------

type cryoTx struct {
	index            uint64
	hash, from, to   []byte
	value            *big.Int
	gasUsed, price   uint64
	hasGas, hasPrice bool
	success, hasOK   bool
	typ              uint64
	hasTyp           bool
	logs             []cryoLog
}

type cryoLog struct {
	index uint64
	obj   map[string]any
}

type cryoBlock struct {
	number    uint64
	hash      []byte
	miner     []byte
	baseFee   uint64
	hasBase   bool
	timestamp uint64
	txs       []*cryoTx
	byIndex   map[uint64]*cryoTx
}

// load reads the range's three files and returns the bundles as JSON.
func (c *cryoRange) load(max int) ([]byte, error) {
	lo, _ := strconv.ParseUint(c.start, 10, 64)
	hi, _ := strconv.ParseUint(c.end, 10, 64)
	tabs := map[string]*cryoTable{}
	left := cryoRowBudget(max)
	for _, ds := range []string{"blocks", "transactions", "logs"} {
		p := c.files[ds]
		if p == "" {
			p = filepath.Join(c.dir, c.fileName(ds))
		}
		t, err := readCryoTable(p, max, left)
		if err != nil {
			return nil, err
		}
		tabs[ds] = t
	}
	inRange := func(t *cryoTable, row int, n uint64) error {
		if n < lo || n > hi {
			return fmt.Errorf("%s: row %d: block %d is outside the file's range %d to %d", t.path, row, n, lo, hi)
		}
		return nil
	}

	// blocks
	bt := tabs["blocks"]
	bn, err := bt.need("block_number", "number")
	if err != nil {
		return nil, err
	}
	bh, _ := bt.col("block_hash", "hash")
	ba, _ := bt.col("author", "miner")
	bb, _ := bt.col("base_fee_per_gas")
	bts, _ := bt.col("timestamp")
	blocks := map[uint64]*cryoBlock{}
	var order []uint64
	for r := range bt.rows {
		n, ok, err := bt.uint(r, bn)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s: row %d: block_number is null", bt.path, r)
		}
		if err := inRange(bt, r, n); err != nil {
			return nil, err
		}
		if blocks[n] != nil {
			return nil, fmt.Errorf("%s: row %d: block %d is given twice", bt.path, r, n)
		}
		b := &cryoBlock{number: n, byIndex: map[uint64]*cryoTx{}}
		if bh >= 0 {
			if b.hash, err = bt.bytesOf(r, bh, 32); err != nil {
				return nil, err
			}
		}
		if ba >= 0 {
			if b.miner, err = bt.bytesOf(r, ba, 20); err != nil {
				return nil, err
			}
		}
		if bb >= 0 {
			if b.baseFee, b.hasBase, err = bt.uint(r, bb); err != nil {
				return nil, err
			}
		}
		if bts >= 0 {
			if b.timestamp, _, err = bt.uint(r, bts); err != nil {
				return nil, err
			}
		}
		blocks[n] = b
		order = append(order, n)
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })

	// transactions
	tt := tabs["transactions"]
	cols := map[string]int{}
	for _, n := range []string{"block_number", "transaction_index", "transaction_hash", "from_address"} {
		if cols[n], err = tt.need(n); err != nil {
			return nil, err
		}
	}
	cto, _ := tt.col("to_address")
	if cto < 0 {
		return nil, fmt.Errorf("%s: no column to_address (cryo writes it by default)", tt.path)
	}
	vb, vbName := tt.col("value_binary", "value")
	vs, _ := tt.col("value_string", "value_str")
	if vbName == "value" && tt.typ["value"].Kind() != parquet.ByteArray {
		vb = -1
	}
	if vb < 0 && vs < 0 {
		msg := fmt.Sprintf("%s: no value_binary or value_string column (cryo --u256-types binary or string)", tt.path)
		if i, _ := tt.col("value_f64", "value_float"); i >= 0 {
			msg += ": value_f64 alone is rounded, not read"
		}
		return nil, fmt.Errorf("%s", msg)
	}
	cgas, _ := tt.col("gas_used")
	cprice, _ := tt.col("gas_price")
	cok, _ := tt.col("success")
	ctyp, _ := tt.col("transaction_type")
	for r := range tt.rows {
		n, ok, err := tt.uint(r, cols["block_number"])
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s: row %d: block_number is null (a pending transaction?)", tt.path, r)
		}
		if err := inRange(tt, r, n); err != nil {
			return nil, err
		}
		b := blocks[n]
		if b == nil {
			return nil, fmt.Errorf("%s: row %d: block %d is not in %s", tt.path, r, n, bt.path)
		}
		x := &cryoTx{}
		if x.index, ok, err = tt.uint(r, cols["transaction_index"]); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%s: row %d: transaction_index is null", tt.path, r)
			}
			return nil, err
		}
		if x.hash, err = tt.bytesOf(r, cols["transaction_hash"], 32); err != nil {
			return nil, err
		}
		if x.from, err = tt.bytesOf(r, cols["from_address"], 20); err != nil {
			return nil, err
		}
		if x.to, err = tt.bytesOf(r, cto, 20); err != nil {
			return nil, err
		}
		if x.hash == nil || x.from == nil {
			return nil, fmt.Errorf("%s: row %d: transaction_hash or from_address is null", tt.path, r)
		}
		switch {
		case vb >= 0 && !tt.rows[r][vb].IsNull():
			v, err := tt.bytesOf(r, vb, 0)
			if err != nil {
				return nil, err
			}
			if len(v) > 32 {
				return nil, fmt.Errorf("%s: row %d: value has %d bytes, over 32", tt.path, r, len(v))
			}
			x.value = new(big.Int).SetBytes(v)
		case vs >= 0 && !tt.rows[r][vs].IsNull():
			s := string(tt.rows[r][vs].ByteArray())
			v, ok := new(big.Int).SetString(s, 10)
			if !ok || v.Sign() < 0 || v.BitLen() > 256 {
				return nil, fmt.Errorf("%s: row %d: value_string %q is not a decimal u256", tt.path, r, s)
			}
			x.value = v
		}
		if cgas >= 0 {
			if x.gasUsed, x.hasGas, err = tt.uint(r, cgas); err != nil {
				return nil, err
			}
		}
		if cprice >= 0 {
			if x.price, x.hasPrice, err = tt.uint(r, cprice); err != nil {
				return nil, err
			}
		}
		if ctyp >= 0 {
			if x.typ, x.hasTyp, err = tt.uint(r, ctyp); err != nil {
				return nil, err
			}
		}
		if cok >= 0 {
			v := tt.rows[r][cok]
			if !v.IsNull() {
				if v.Kind() != parquet.Boolean {
					return nil, tt.bad(r, "success", "a boolean", v)
				}
				x.success, x.hasOK = v.Boolean(), true
			}
		}
		if b.byIndex[x.index] != nil {
			return nil, fmt.Errorf("%s: row %d: block %d has two transactions at index %d", tt.path, r, n, x.index)
		}
		b.byIndex[x.index] = x
		b.txs = append(b.txs, x)
	}

	// logs
	lt := tabs["logs"]
	for _, n := range []string{"block_number", "transaction_index", "log_index", "transaction_hash", "data"} {
		if cols["l"+n], err = lt.need(n); err != nil {
			return nil, err
		}
	}
	if cols["laddress"], err = lt.need("address", "contract_address"); err != nil {
		return nil, err
	}
	var topics [4]int
	for i := range topics {
		topics[i], _ = lt.col("topic" + strconv.Itoa(i))
		if topics[i] < 0 {
			return nil, fmt.Errorf("%s: no column topic%d (cryo writes it by default)", lt.path, i)
		}
	}
	for r := range lt.rows {
		n, _, err := lt.uint(r, cols["lblock_number"])
		if err != nil {
			return nil, err
		}
		if err := inRange(lt, r, n); err != nil {
			return nil, err
		}
		ti, _, err := lt.uint(r, cols["ltransaction_index"])
		if err != nil {
			return nil, err
		}
		b := blocks[n]
		if b == nil {
			return nil, fmt.Errorf("%s: row %d: block %d is not in %s", lt.path, r, n, bt.path)
		}
		x := b.byIndex[ti]
		if x == nil {
			return nil, fmt.Errorf("%s: row %d: block %d has no transaction at index %d in %s", lt.path, r, n, ti, tt.path)
		}
		li, _, err := lt.uint(r, cols["llog_index"])
		if err != nil {
			return nil, err
		}
		h, err := lt.bytesOf(r, cols["ltransaction_hash"], 32)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(h, x.hash) {
			return nil, fmt.Errorf("%s: row %d: transaction_hash %s is not that of block %d's transaction %d in %s (%s)", lt.path, r, hx(h), n, ti, tt.path, hx(x.hash))
		}
		addr, err := lt.bytesOf(r, cols["laddress"], 20)
		if err != nil {
			return nil, err
		}
		data, err := lt.bytesOf(r, cols["ldata"], 0)
		if err != nil {
			return nil, err
		}
		var tps []string
		for _, c := range topics {
			tb, err := lt.bytesOf(r, c, 32)
			if err != nil {
				return nil, err
			}
			if tb == nil {
				break
			}
			tps = append(tps, hx(tb))
		}
		if tps == nil {
			tps = []string{}
		}
		l := map[string]any{
			"address": hx(addr), "topics": tps, "data": hx(data),
			"logIndex": qty(li), "transactionIndex": qty(ti), "transactionHash": hx(x.hash),
			"blockNumber": qty(n),
		}
		if b.hash != nil {
			l["blockHash"] = hx(b.hash)
		}
		x.logs = append(x.logs, cryoLog{li, l})
	}

	// traces, when the range has them
	var frames map[string][]*cryoFrame
	if p := c.files["traces"]; p != "" {
		t, err := readCryoTable(p, max, left)
		if err != nil {
			return nil, err
		}
		if frames, err = cryoTraces(t, blocks, inRange); err != nil {
			return nil, err
		}
		tabs["traces"] = t
	}

	// bundles, one per block with transactions
	var bundles []map[string]any
	for _, n := range order {
		b := blocks[n]
		if len(b.txs) == 0 {
			continue
		}
		sort.Slice(b.txs, func(i, j int) bool { return b.txs[i].index < b.txs[j].index })
		receipts := true
		for _, x := range b.txs {
			receipts = receipts && x.hasGas && x.hasOK
		}
		hdr := map[string]any{"number": qty(n), "timestamp": qty(b.timestamp)}
		if b.hash != nil {
			hdr["hash"] = hx(b.hash)
		}
		if b.miner != nil {
			hdr["miner"] = hx(b.miner)
		}
		if b.hasBase {
			hdr["baseFeePerGas"] = qty(b.baseFee)
		}
		var txs, rcpts, logs, traces []any
		for _, x := range b.txs {
			if frames != nil {
				fs := frames[hx(x.hash)]
				switch {
				case len(fs) > 0:
					for _, f := range fs {
						traces = append(traces, f.obj)
					}
				case x.hasOK && x.success:
					return nil, fmt.Errorf("%s: no frame of block %d's transaction %d (%s), which succeeded (transactions' success column)", tabs["traces"].path, n, x.index, hx(x.hash))
				default:
					traces = append(traces, failedTop(x, n))
				}
			}
			o := map[string]any{"hash": hx(x.hash), "transactionIndex": qty(x.index), "from": hx(x.from), "to": nil}
			if x.to != nil {
				o["to"] = hx(x.to)
			}
			if x.value != nil {
				o["value"] = "0x" + x.value.Text(16)
			}
			if x.hasPrice {
				o["gasPrice"] = qty(x.price)
			}
			if x.hasTyp {
				o["type"] = qty(x.typ)
			}
			txs = append(txs, o)
			sort.SliceStable(x.logs, func(i, j int) bool { return x.logs[i].index < x.logs[j].index })
			xl := make([]any, len(x.logs))
			for i, l := range x.logs {
				xl[i] = l.obj
			}
			if receipts {
				rc := map[string]any{"transactionHash": hx(x.hash), "transactionIndex": qty(x.index), "blockNumber": qty(n),
					"from": hx(x.from), "to": o["to"], "status": "0x0", "gasUsed": qty(x.gasUsed), "logs": xl}
				if x.success {
					rc["status"] = "0x1"
				}
				if x.hasPrice {
					rc["effectiveGasPrice"] = qty(x.price)
				}
				if x.hasTyp {
					rc["type"] = qty(x.typ)
				}
				rcpts = append(rcpts, rc)
			} else {
				logs = append(logs, xl...)
			}
		}
		hdr["transactions"] = txs
		bundle := map[string]any{"block": hdr}
		if frames != nil {
			bundle["traces"] = traces
		}
		if receipts {
			bundle["receipts"] = rcpts
		} else {
			if logs == nil {
				logs = []any{}
			}
			bundle["logs"] = logs
		}
		bundles = append(bundles, bundle)
	}
	if len(bundles) == 0 {
		return nil, fmt.Errorf("%s: no transaction in blocks %d to %d", tt.path, lo, hi)
	}
	return json.Marshal(bundles)
}
