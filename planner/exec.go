package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// Field is one value of a row: Value for machines (hashes in hex, amounts
// in base units), Human for people (symbols and decimals where known).
type Field struct {
	Name, Value, Human string
}

// Row is one result row, its fields in column order.
type Row []Field

// Get returns a field's value by name.
func (r Row) Get(name string) string {
	for _, f := range r {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// Executor runs plans against a source.
type Executor struct {
	Src Source
	Cfg *normalform.Config
	// Timeout bounds one query's run: past it the query stops with a
	// *LimitError (default DefaultTimeout; negative: no limit).
	Timeout time.Duration
	// MaxRows bounds the rows one query returns: the row after the last
	// allowed stops it with a *LimitError, the rows before it emitted
	// (default DefaultMaxRows; negative: no limit).
	MaxRows int
	// LendRows lends emit its rows: a row's slice of fields is valid only
	// until emit returns, and the next row may be formatted into it. The
	// fields' strings stay valid (they are never written again). A
	// consumer that keeps no row past its call (a count, a stream of JSON
	// lines or CSV) spares a row's fields each (for find's rows, 13 fields
	// of 48 bytes: a million-row scan's largest allocation). Rows not
	// formatted from stored records are fresh either way.
	LendRows bool
}

// Default limits of a query (Executor).
const (
	DefaultTimeout = 10 * time.Minute
	DefaultMaxRows = 1_000_000
)

// LimitError is a query stopped by one of Executor's limits; it names the
// limit and its value.
type LimitError struct {
	Limit string // "query time" or "result size"
	Value string // the limit's value: "10m0s", "1000000 rows"
	Hint  string // how to change it
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("stopped: the %s limit of %s was reached (%s)", e.Limit, e.Value, e.Hint)
}

// errLimit stops a scan when a limit is reached.
var errLimit = errors.New("limit reached")

// Run executes a query and streams its rows to emit. It stops when ctx is
// cancelled (returning ctx.Err()) or emit returns an error.
func (x *Executor) Run(ctx context.Context, q *Query, emit func(Row) error) error {
	timeout, maxRows := x.Timeout, x.MaxRows
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if maxRows == 0 {
		maxRows = DefaultMaxRows
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout,
			&LimitError{Limit: "query time", Value: timeout.String(), Hint: "flowq --timeout"})
		defer cancel()
	}
	if maxRows > 0 {
		inner, n := emit, 0
		emit = func(r Row) error {
			if n++; n > maxRows {
				return &LimitError{Limit: "result size", Value: fmt.Sprintf("%d rows", maxRows), Hint: "narrow the query or add 'limit N'; flowq --max-rows"}
			}
			return inner(r)
		}
	}
	// No row after a cancellation: scans run ahead of the consumer, so
	// rows already built when it cancels are dropped here.
	counted := emit
	emit = func(r Row) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return counted(r)
	}
	err := x.run(ctx, q, emit)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		var le *LimitError
		if errors.As(context.Cause(ctx), &le) {
			return le
		}
	}
	return err
}

func (x *Executor) run(ctx context.Context, q *Query, emit func(Row) error) error {
	switch p := q.Plan.(type) {
	case *Compare:
		return x.compare(ctx, p, emit)
	case *MatchRef:
		return x.match(ctx, p, emit)
	case *Anomalies:
		return x.anomalies(ctx, p, emit)
	case *ShowTx:
		return x.show(p, emit)
	case *ShowBlock:
		return x.showBlock(ctx, p, emit)
	}
	if isFindings(q.Plan) {
		if findGroup(q.Plan) != nil {
			return x.findingsGroup(ctx, q.Plan, emit)
		}
		return x.findings(ctx, q.Plan, func(f *Finding) error { return emit(x.findingRow(f)) })
	}
	if g := findGroup(q.Plan); g != nil {
		return x.group(ctx, q.Plan, emit)
	}
	return x.records(ctx, q.Plan, rowsLent, x.rows(emit))
}

func findGroup(p Plan) *Group {
	switch n := p.(type) {
	case *Group:
		return n
	case *Limit:
		return findGroup(n.Input)
	}
	return nil
}

// lookup is the index lookup of an access path that reads secondary
// keys (false: the path is not one).
func lookup(p Plan) (layout.Lookup, bool) {
	switch n := p.(type) {
	case *HashLookup:
		return layout.Lookup{By: layout.KindHash, Level: n.Level, Hash: n.Hash, Blocks: n.Blocks}, true
	case *BotScan:
		return layout.Lookup{By: layout.KindBot, Addr: n.Bot, Blocks: n.Blocks}, true
	case *AddressScan:
		return layout.Lookup{By: layout.KindAddr, Addr: n.Addr, AsToken: n.AsToken, Blocks: n.Blocks}, true
	case *TokenScan:
		return layout.Lookup{By: layout.KindToken, Token: n.Token, Blocks: n.Blocks}, true
	case *KeyScan:
		return n.Lookup, true
	case *TierScan:
		return layout.Lookup{By: layout.KindVerdict, Verdict: n.Verdict, Tier: n.Tier, Blocks: n.Blocks}, true
	case *ProfitRange:
		return layout.Lookup{By: layout.KindProfit, Side: n.Side, Token: n.Token, Lo: n.Lo, Hi: n.Hi, Blocks: layout.AllBlocks}, true
	}
	return layout.Lookup{}, false
}

// scanRange is the block range of a plan that reads every record of one
// (a full scan, a block range; false: the plan does not).
func scanRange(p Plan) (layout.BlockRange, bool) {
	switch n := p.(type) {
	case *FullScan:
		return layout.AllBlocks, true
	case *BlockScan:
		return n.Blocks, true
	case *HashCount: // on a Source that cannot count keys
		return n.Blocks, true
	}
	return layout.BlockRange{}, false
}

// headerScan runs a filter over a full or block-range scan on the
// records' headers, when the predicate needs no more than the header
// (pred nil: every record). The predicate is
// evaluated on all cores (it only reads the record); emit receives the
// records that pass, in position order, whole when whole is set, else as
// their headers. ok is false when the plan cannot run so.
func (x *Executor) headerScan(ctx context.Context, p Plan, need needs, whole bool, emit func(*layout.Record) error) (ok bool, err error) {
	var pred *Pred
	if flt, isFilter := p.(*Filter); isFilter {
		pred, p = flt.Pred, flt.Input
		need = both(need, pred.need)
	}
	blocks, isScan := scanRange(p)
	if !isScan || need == needFull {
		return false, nil
	}
	var match func(*layout.Record) (bool, error)
	if pred != nil {
		match = pred.Eval
	}
	return true, x.Src.Filter(ctx, blocks, need == needAddrs, match, whole, emit)
}

// records runs a record-producing plan. Each access path has one
// execution: a secondary-key path is one Fetch, a block range or a full
// scan one Filter (on the headers first when a filter above it can be
// decided there). With rows, the records only become rows (recordRow): a
// lookup, a scan, or a filter decided on the headers over one, under sorts
// and limits (whose keys read no more than a row), reads them as rows
// (Lookup.Rows, rowSource) when the Source can.
//
// With rowsLent, emit also keeps nothing of a record past its call (it
// formats the row at once): a scan lends it records whose storage it
// reuses (lentRowSource).
func (x *Executor) records(ctx context.Context, p Plan, want recordUse, emit func(*layout.Record) error) error {
	rows := want != recordsOwned
	rs, _ := x.Src.(rowSource)
	ls, _ := x.Src.(lentRowSource)
	if want != rowsLent {
		ls = nil
	}
	if lk, ok := lookup(p); ok {
		lk.Rows = rows // no NF read beside each record found
		return x.Src.Fetch(ctx, lk, emit)
	}
	if blocks, ok := scanRange(p); ok {
		if ls != nil {
			return ls.FilterRowsLent(ctx, blocks, false, false, nil, emit)
		}
		if rows && rs != nil {
			return rs.FilterRows(ctx, blocks, false, nil, emit)
		}
		return x.Src.Filter(ctx, blocks, false, nil, true, emit)
	}
	switch n := p.(type) {
	case TxLookup:
		rec, err := x.get(n.Tx)
		if err != nil {
			return err
		}
		return emit(rec)
	case *Filter:
		if rows && rs != nil && n.Pred.need != needFull {
			if blocks, ok := scanRange(n.Input); ok {
				if ls != nil {
					return ls.FilterRowsLent(ctx, blocks, n.Pred.need == needAddrs, n.Pred.need == needFront, n.Pred.Eval, emit)
				}
				if fs, ok := x.Src.(frontRowSource); ok && n.Pred.need == needFront {
					return fs.FilterRowsByFront(ctx, blocks, n.Pred.Eval, emit)
				}
				return rs.FilterRows(ctx, blocks, n.Pred.need == needAddrs, n.Pred.Eval, emit)
			}
			if lk, ok := lookup(n.Input); ok {
				lk.Rows = true // a row holds the header and the principals the predicate reads
				return x.Src.Fetch(ctx, lk, filtered(n.Pred, emit))
			}
		}
		if ok, err := x.headerScan(ctx, p, needHeader, true, emit); ok {
			return err
		}
		return x.records(ctx, n.Input, recordsOwned, filtered(n.Pred, emit))
	case *Sort:
		self := func(r *layout.Record) (*layout.Record, error) { return r, nil }
		if want == rowsLent {
			want = rowsOwned // sortedBy keeps the records until the last
		}
		return sortedBy(func(emit func(*layout.Record) error) error { return x.records(ctx, n.Input, want, emit) }, self, n.Key.Less, n.Desc, emit)
	case *Limit:
		return limitTo(n.N, func(emit func(*layout.Record) error) error { return x.records(ctx, n.Input, want, emit) }, emit)
	}
	return fmt.Errorf("the plan step %q cannot run (a bug in flowq's planner)", p.Describe())
}

// filtered passes on the records pred holds for.
func filtered(pred *Pred, emit func(*layout.Record) error) func(*layout.Record) error {
	return func(r *layout.Record) error {
		ok, err := pred.Eval(r)
		if err != nil || !ok {
			return err
		}
		return emit(r)
	}
}

// rowSource is a Source whose scans can give the records they emit
// decoded only as far as recordRow reads (index.Index.FilterRows: no
// addresses, tokens or normal form, which a record's value does not hold
// beside what a row shows: its NF is under another key).
type rowSource interface {
	FilterRows(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error
}

// frontRowSource is a rowSource whose scans can decide a filter on the
// records' fronts (index.Index.FilterRowsByFront: position, verdict, tier,
// path, mode and counts, read without the dictionary): the predicate
// needs no more (needFront).
type frontRowSource interface {
	FilterRowsByFront(ctx context.Context, blocks layout.BlockRange, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error
}

// lentRowSource is a rowSource whose scans can lend fn the rows' records
// (index.Index.FilterRowsLent): each valid only during fn, its storage
// reused for the records after it; with front, the filter is decided on
// the records' fronts (as frontRowSource's). A lent record holds what a
// row shows (rowFormatter.row): not From, nor the dictionary's hashes.
type lentRowSource interface {
	FilterRowsLent(ctx context.Context, blocks layout.BlockRange, addrs, front bool, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error
}

// recordUse is what records' emit does with the records it receives.
type recordUse uint8

const (
	recordsOwned recordUse = iota // keeps them, or reads past a row: whole records, each its own
	rowsOwned                     // reads no more than a row, and may keep them (a sort)
	rowsLent                      // reads no more than a row, keeps nothing of one past its call
)

// recordRow is a transaction's row in find, match and anomalies results
// (rowFormatter.row; a query's many rows share one formatter: rows).
func (x *Executor) recordRow(r *layout.Record) Row { return newRowFormatter(x.Cfg).row(r) }

// rows turns the records of one query into rows, for emit.
func (x *Executor) rows(emit func(Row) error) func(*layout.Record) error {
	f := newRowFormatter(x.Cfg)
	f.lend = x.LendRows
	return func(r *layout.Record) error { return emit(f.row(r)) }
}

// smallNums are the decimal forms of the counts rows show most.
var smallNums = func() (out [64]string) {
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return
}()

func smallNum(n int) string {
	if n >= 0 && n < len(smallNums) {
		return smallNums[n]
	}
	return strconv.Itoa(n)
}

func (x *Executor) analysis(h normalform.Hash) (*normalform.Analysis, *layout.Record, error) {
	rec, err := x.get(h)
	if err != nil {
		return nil, nil, err
	}
	a, err := rec.Analysis()
	if err != nil {
		return nil, nil, fmt.Errorf("tx %s: %w", h.Hex(), err)
	}
	return a, rec, nil
}

// get reads one record; a transaction missing from the index is an error
// that says what to do.
func (x *Executor) get(h normalform.Hash) (*layout.Record, error) {
	rec, err := x.Src.Get(h)
	if errors.Is(err, layout.ErrNotFound) || (err == nil && rec == nil) {
		return nil, fmt.Errorf("tx %s is not in the index: ingest it first (flowq ingest, or .ingest in the REPL)", h.Hex())
	}
	return rec, err
}

// compare is Q_eq / Q_fam: equal at the level, and where the canonical
// forms first differ.
func (x *Executor) compare(ctx context.Context, p *Compare, emit func(Row) error) error {
	a, _, err := x.analysis(p.A.(TxLookup).Tx)
	if err != nil {
		return err
	}
	b, _, err := x.analysis(p.B.(TxLookup).Tx)
	if err != nil {
		return err
	}
	ca, cb := a.Canonical(p.Level), b.Canonical(p.Level)
	equal := ca == cb
	diff := ""
	if !equal {
		diff = firstDifference(ca, cb)
	}
	yes := map[bool]string{true: "yes", false: "no"}[equal]
	return emit(Row{
		{"equivalent", yes, yes},
		{"level", p.Level.String(), p.Level.String()},
		{"first_difference", diff, diff},
		{"a", ca, ca},
		{"b", cb, cb},
	})
}

// firstDifference names the first element (a cycle, chain, leftover) of
// two canonical forms that differs, and shows both from the first
// differing character.
func firstDifference(a, b string) string {
	ea, eb := strings.Split(a, " ; "), strings.Split(b, " ; ")
	for i := 0; i < len(ea) || i < len(eb); i++ {
		var x, y string
		if i < len(ea) {
			x = ea[i]
		}
		if i < len(eb) {
			y = eb[i]
		}
		if x == y {
			continue
		}
		if x == "" {
			return fmt.Sprintf("element %d: only the second has %s", i+1, clip(y, 80))
		}
		if y == "" {
			return fmt.Sprintf("element %d: only the first has %s", i+1, clip(x, 80))
		}
		rx, ry := []rune(x), []rune(y)
		k := 0
		for k < len(rx) && k < len(ry) && rx[k] == ry[k] {
			k++
		}
		from := k - 20
		if from < 0 {
			from = 0
		}
		return fmt.Sprintf("element %d, at character %d: %s… vs %s…", i+1, k+1,
			clip(string(rx[from:]), 60), clip(string(ry[from:]), 60))
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

// match is Q_match: the reference's hash at the level, then the lookup.
func (x *Executor) match(ctx context.Context, p *MatchRef, emit func(Row) error) error {
	ref, err := x.get(p.Ref.(TxLookup).Tx)
	if err != nil {
		return err
	}
	plan := withHash(p.Then, ref.Hashes.Of(p.Level))
	return x.records(ctx, plan, rowsLent, x.rows(emit))
}

// withHash rebuilds a match plan with the reference's hash in its lookup.
func withHash(p Plan, h normalform.Hash) Plan {
	switch n := p.(type) {
	case *HashLookup:
		c := *n
		c.Hash = h
		return &c
	case *Filter:
		return &Filter{Input: withHash(n.Input, h), Pred: n.Pred}
	case *Sort:
		return &Sort{Input: withHash(n.Input, h), Key: n.Key, Desc: n.Desc}
	case *Limit:
		return &Limit{Input: withHash(n.Input, h), N: n.N}
	}
	return p
}

// anomalies is Q_anom.
func (x *Executor) anomalies(ctx context.Context, p *Anomalies, emit func(Row) error) error {
	first := map[normalform.Hash]layout.Ref{}
	if err := x.Src.BotShapes(ctx, p.Bot, func(shape normalform.Hash, r layout.Ref) error {
		first[shape] = r
		return nil
	}); err != nil {
		return err
	}
	// The bot's transactions: their headers are enough (shape, hash,
	// position).
	bot := func(blocks layout.BlockRange, fn func(shape normalform.Hash, r layout.Ref) error) error {
		lk := layout.Lookup{By: layout.KindBot, Addr: p.Bot, Blocks: blocks, Partial: true}
		return x.Src.Fetch(ctx, lk, func(r *layout.Record) error {
			return fn(r.Hashes.Shape, layout.Ref{Hash: r.Hash, Loc: r.Loc})
		})
	}
	base := map[normalform.Hash]bool{}
	if p.Baseline != nil {
		if err := bot(*p.Baseline, func(shape normalform.Hash, _ layout.Ref) error {
			base[shape] = true
			return nil
		}); err != nil {
			return err
		}
	}
	// The bot's transactions in position order (the lookup streams by
	// shape).
	type hit struct {
		shape normalform.Hash
		ref   layout.Ref
	}
	var all []hit
	if err := bot(layout.AllBlocks, func(shape normalform.Hash, r layout.Ref) error {
		all = append(all, hit{shape, r})
		return nil
	}); err != nil {
		return err
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].ref.Loc, all[j].ref.Loc
		if a.Block != b.Block {
			return a.Block < b.Block
		}
		return a.Index < b.Index
	})
	n := 0
	for i, h := range all {
		f := first[h.shape]
		var why string
		switch {
		case p.Baseline != nil:
			if h.ref.Loc.Block > p.Baseline.To && !base[h.shape] {
				why = fmt.Sprintf("shape not among blocks %d..%d", p.Baseline.From, p.Baseline.To)
			}
		case p.Since != nil:
			if h.ref.Loc.Block >= *p.Since && f.Loc.Block >= *p.Since {
				why = fmt.Sprintf("shape first used at block %d", f.Loc.Block)
			}
		default:
			if i > 0 && f.Hash == h.ref.Hash {
				why = "first use of this shape"
			}
		}
		if why == "" {
			continue
		}
		rec, err := x.Src.Get(h.ref.Hash)
		if err != nil {
			return err
		}
		row := append(x.recordRow(rec), Field{"shape", h.shape.Hex(), h.shape.Hex()[:18] + "…"}, Field{"why", why, why})
		if err := emit(row); err != nil {
			return err
		}
		if n++; p.Limit > 0 && n == p.Limit {
			break
		}
	}
	return nil
}

// group counts by a key.
func (x *Executor) group(ctx context.Context, plan Plan, emit func(Row) error) error {
	g, limit := splitGroup(plan)
	if hc, ok := g.Input.(*HashCount); ok {
		if c, ok := x.Src.(HashCounter); ok {
			return x.countKeys(ctx, c, hc, g, limit, emit)
		}
	}
	type bucket struct {
		key, human string
		txs        int
		distinct   map[string]bool
		example    normalform.Hash
	}
	buckets := map[string]*bucket{}
	var order []string
	// The hex of the hashes that repeat (shape, tokens, family), memoised
	// for a scan of a million rows; bounded.
	memo := map[normalform.Hash][2]string{}
	key := func(r *layout.Record) (string, string) {
		var h normalform.Hash
		lvl, ok := g.By.Level()
		if !ok || g.By == lang.GroupExact {
			return groupKey(x.Cfg, r, g.By)
		}
		h = r.Hashes.Of(lvl)
		if m, ok := memo[h]; ok {
			return m[0], m[1]
		}
		k, hu := groupKey(x.Cfg, r, g.By)
		if len(memo) < 1<<16 {
			memo[h] = [2]string{k, hu}
		}
		return k, hu
	}
	tally := func(r *layout.Record) error {
		k, h := key(r)
		b := buckets[k]
		if b == nil {
			b = &bucket{key: k, human: h, distinct: map[string]bool{}, example: r.Hash}
			buckets[k] = b
			order = append(order, k)
		}
		b.txs++
		switch g.What {
		case "bots":
			b.distinct[normalform.AddrKey(r.Recipient)] = true
		case "shapes":
			b.distinct[r.Hashes.Shape.Hex()] = true
		case "families":
			b.distinct[r.Hashes.Family.Hex()] = true
		}
		return nil
	}
	// On the records' headers when the grouping and its filter need no
	// more, else on whole records.
	need := needHeader
	if g.By == lang.GroupBot || g.By == lang.GroupSender || g.What == "bots" {
		need = needAddrs
	}
	ok, err := x.headerScan(ctx, g.Input, need, false, tally)
	if !ok {
		err = x.records(ctx, g.Input, recordsOwned, tally)
	}
	if err != nil {
		return err
	}
	count := func(b *bucket) int {
		if g.What == "transactions" {
			return b.txs
		}
		return len(b.distinct)
	}
	for _, k := range largestFirst(order, func(k string) int { return count(buckets[k]) }, limit) {
		b := buckets[k]
		c := fmt.Sprint(count(b))
		row := Row{{g.By.String(), b.key, b.human}, {g.What, c, c}}
		if g.What != "transactions" {
			t := fmt.Sprint(b.txs)
			row = append(row, Field{"transactions", t, t})
		}
		row = append(row, Field{"example", b.example.Hex(), b.example.Hex()})
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

// countKeys runs a count of transactions by shape, tokens or family from
// the hash keys (HashCount): the rows group would give over the records,
// in the same order (largestFirst), with the same examples (each hash's
// first transaction in position order).
func (x *Executor) countKeys(ctx context.Context, c HashCounter, hc *HashCount, g *Group, limit int, emit func(Row) error) error {
	type bucket struct {
		n     int
		first layout.Ref
	}
	buckets := map[string]bucket{}
	var order []string
	if err := c.CountHashes(ctx, hc.Level, hc.Blocks, func(h normalform.Hash, n int, first layout.Ref) error {
		k := h.Hex()
		if b, ok := buckets[k]; ok { // one call per hash; a repeat is counted, not lost
			b.n += n
			if first.Loc.Less(b.first.Loc) {
				b.first = first
			}
			buckets[k] = b
			return nil
		}
		buckets[k] = bucket{n, first}
		order = append(order, k)
		return nil
	}); err != nil {
		return err
	}
	for _, k := range largestFirst(order, func(k string) int { return buckets[k].n }, limit) {
		b := buckets[k]
		n := fmt.Sprint(b.n)
		row := Row{{g.By.String(), k, k[:18] + "…"}, {g.What, n, n}, {"example", b.first.Hash.Hex(), b.first.Hash.Hex()}}
		if err := emit(row); err != nil {
			return err
		}
	}
	return nil
}

func groupKey(cfg *normalform.Config, r *layout.Record, by lang.GroupBy) (string, string) {
	short := func(h normalform.Hash) (string, string) { return h.Hex(), h.Hex()[:18] + "…" }
	switch by {
	case lang.GroupFamily:
		return short(r.Hashes.Family)
	case lang.GroupShape:
		return short(r.Hashes.Shape)
	case lang.GroupTokens:
		return short(r.Hashes.Tokens)
	case lang.GroupExact:
		return short(r.Hashes.Exact)
	case lang.GroupBot:
		f := addrField("bot", r.Recipient)
		return f.Value, f.Human
	case lang.GroupSender:
		f := addrField("sender", r.From)
		return f.Value, f.Human
	case lang.GroupVerdict:
		return r.Verdict.String(), r.Verdict.String()
	case lang.GroupTier:
		return r.Tier.String(), r.Tier.String()
	case lang.GroupPath:
		return r.Path.String(), r.Path.String()
	case lang.GroupMode:
		return r.Mode.String(), r.Mode.String()
	case lang.GroupBlock:
		return fmt.Sprint(r.Loc.Block), fmt.Sprint(r.Loc.Block)
	}
	return "", ""
}

// show renders one transaction.
func (x *Executor) show(p *ShowTx, emit func(Row) error) error {
	a, _, err := x.analysis(p.Input.(TxLookup).Tx)
	if err != nil {
		return err
	}
	cfg := x.Cfg.ForAnalysis(a) // one output: addresses in forms no two share
	var b strings.Builder
	// The analysis (verdict, balances, cycles as trees, leftovers, terms,
	// family, hashes) answers tree, cycles, balances and terms at once:
	// it is written once, however many of them are asked for.
	wrote, withSteps := false, false
	analysis := slices.ContainsFunc(p.Views, func(v string) bool {
		return v == "all" || v == "tree" || v == "cycles" || v == "balances"
	})
	for _, v := range p.Views {
		switch v {
		case "all", "tree", "cycles", "balances":
			if !wrote {
				withSteps = v == "all"
				show.WriteAnalysis(cfg, &b, a, withSteps)
				wrote = true
			}
		case "terms":
			if !analysis {
				for _, t := range a.RenderTerms(cfg) {
					b.WriteString(t + "\n")
				}
			}
		case "steps":
			if withSteps {
				continue
			}
			for i, s := range cfg.StepTexts(a) {
				fmt.Fprintf(&b, "%3d %s\n", i+1, s)
			}
		case "transfers":
			for i := range a.Tx.Transfers {
				b.WriteString(show.LeafString(cfg, &a.Tx.Transfers[i]) + "\n")
			}
		}
	}
	text := b.String()
	return emit(Row{{"tx", a.Tx.Meta.Hash.Hex(), a.Tx.Meta.Hash.Hex()}, {"text", text, text}})
}
