package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// Source is what the planner needs of an index, written in package
// layout's types (the planner links no store): a record by its
// transaction, the records one secondary-key access path finds, a scan of
// a block range that decides on each record's header, a bot's shapes, and
// the block findings. Each access path of a plan runs through exactly one
// of these. *layout.Index satisfies it (the tests check it: the planner
// does not import index).
type Source interface {
	// Get reads a transaction's record; an error wrapping
	// layout.ErrNotFound when the transaction is not there.
	Get(tx normalform.Hash) (*layout.Record, error)
	// Fetch streams the records a lookup finds, in its order, each once
	// (layout.Index.Fetch).
	Fetch(ctx context.Context, lk layout.Lookup, fn func(*layout.Record) error) error
	// Filter streams the records of a block range in position order
	// whose header match accepts (nil: every record); match may run on
	// several goroutines at once on a Partial record (with From, To and
	// Recipient when addrs is set), fn on the caller's, with the record
	// whole when whole is set (layout.Index.Filter).
	Filter(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), whole bool, fn func(*layout.Record) error) error
	// BotShapes streams the shapes a recipient has used, each with its
	// first transaction, in shape-hash order.
	BotShapes(ctx context.Context, bot normalform.Address, fn func(shape normalform.Hash, first layout.Ref) error) error
	// BlockReports streams the stored block findings of a range, in
	// block order.
	BlockReports(ctx context.Context, blocks layout.BlockRange, fn func(*block.Report) error) error
	// Dirty reports whether a block's findings wait to be computed.
	Dirty(n uint64) (bool, error)
	// Resolve finds the values whose hex digits start with prefix and
	// end with suffix (a shortened reference: lowercase, without 0x),
	// at most max, whole as 0x hex: transaction hashes (by
	// layout.KindTxHash), bots' addresses (layout.KindFirst) or
	// structural hashes at a level (layout.KindHash); an error for a
	// kind the index cannot resolve (index.Index.Resolve).
	Resolve(ctx context.Context, by layout.Kind, level normalform.Level, prefix, suffix string, max int) ([]string, error)
}

// Plan is a node of a query plan. Nodes are immutable once built.
type Plan interface {
	// Describe is the node's one-line description.
	Describe() string
	// Inputs are the node's children.
	Inputs() []Plan
}

// Explain renders a plan as a tree.
func Explain(p Plan) string {
	var b strings.Builder
	var walk func(p Plan, first, rest string)
	walk = func(p Plan, first, rest string) {
		b.WriteString(first + p.Describe() + "\n")
		in := p.Inputs()
		for i, c := range in {
			if i == len(in)-1 {
				walk(c, rest+"└─ ", rest+"   ")
			} else {
				walk(c, rest+"├─ ", rest+"│  ")
			}
		}
	}
	walk(p, "", "")
	return b.String()
}

func blocksText(b layout.BlockRange) string {
	if b == layout.AllBlocks {
		return ""
	}
	to := fmt.Sprint(b.To)
	if b.To >= layout.AllBlocks.To-1 {
		to = "∞"
	}
	return fmt.Sprintf(" blocks %d..%s", b.From, to)
}

// --- access paths -------------------------------------------------------

// Access is a leaf of a plan: where records come from.
type Access interface {
	Plan
	access()
}

// HashLookup reads the transactions with a structural hash at a level.
type HashLookup struct {
	Level  normalform.Level
	Hash   normalform.Hash
	Blocks layout.BlockRange
}

// BotScan reads a bot's transactions (the bot index).
type BotScan struct {
	Bot    normalform.Address
	Blocks layout.BlockRange
}

// AddressScan reads the transactions touching an address: as a sender,
// receiver or principal and, with AsToken, as the token moved.
type AddressScan struct {
	Addr    normalform.Address
	AsToken bool
	Blocks  layout.BlockRange
}

// TokenScan reads the transactions moving a token.
type TokenScan struct {
	Token  normalform.Token
	Name   string
	Blocks layout.BlockRange
}

// ProfitRange reads the transactions whose gross or net balance in a token
// lies in a range, in amount order.
type ProfitRange struct {
	Side   layout.Side
	Token  normalform.Token
	Name   string
	Lo, Hi *normalform.Signed
}

// TierScan reads the transactions with a verdict, and a tier when set.
type TierScan struct {
	Verdict normalform.Verdict
	Tier    *normalform.Tier
	Blocks  layout.BlockRange
}

// KeyScan reads the transactions one secondary key kind of the index
// finds (a layout.Lookup, its Blocks set by the planner): the access path
// of a key kind without a node of its own. What names the key for
// explain ("sender = 0x…").
type KeyScan struct {
	Lookup layout.Lookup
	What   string
}

func (KeyScan) access()        {}
func (KeyScan) Inputs() []Plan { return nil }
func (p KeyScan) Describe() string {
	return fmt.Sprintf("index scan: %s%s", p.What, blocksText(p.Lookup.Blocks))
}

// BlockScan reads a block range in position order.
type BlockScan struct{ Blocks layout.BlockRange }

// FullScan reads every record.
type FullScan struct{}

// TxLookup reads one transaction by hash.
type TxLookup struct{ Tx normalform.Hash }

// HashCount counts the transactions of a block range by their hash at a
// level (shape, tokens, family) from the index's hash keys alone, reading
// no record but each hash's first (the group's example): the access path
// of an unfiltered count by that level, or one filtered by blocks only. A
// Source without HashCounter runs it as the block range's scan.
type HashCount struct {
	Level  normalform.Level
	Blocks layout.BlockRange
}

// HashCounter is what a Source may add to run HashCount: it calls fn once
// for each hash at level some transaction of blocks has, with their
// number and the first of them (index.Index.CountHashes).
type HashCounter interface {
	CountHashes(ctx context.Context, level normalform.Level, blocks layout.BlockRange, fn func(h normalform.Hash, n int, first layout.Ref) error) error
}

func (HashCount) access()        {}
func (HashCount) Inputs() []Plan { return nil }
func (p HashCount) Describe() string {
	return fmt.Sprintf("index count: %s hash keys, key only (no record read)%s", p.Level, blocksText(p.Blocks))
}

func (HashLookup) access()  {}
func (BotScan) access()     {}
func (AddressScan) access() {}
func (TokenScan) access()   {}
func (ProfitRange) access() {}
func (TierScan) access()    {}
func (BlockScan) access()   {}
func (FullScan) access()    {}
func (TxLookup) access()    {}

func (p HashLookup) Describe() string {
	h := p.Hash.Hex()[:18] + "…"
	if p.Hash == (normalform.Hash{}) {
		h = "the reference's"
	}
	return fmt.Sprintf("index lookup: %s hash = %s%s", p.Level, h, blocksText(p.Blocks))
}
func (p BotScan) Describe() string {
	return fmt.Sprintf("index scan: bot = %s%s", normalform.AddrKey(p.Bot), blocksText(p.Blocks))
}
func (p AddressScan) Describe() string {
	if p.AsToken {
		return fmt.Sprintf("index scans: touches %s as an address or as a token (merged in position order)%s", normalform.AddrKey(p.Addr), blocksText(p.Blocks))
	}
	return fmt.Sprintf("index scan: touches address %s%s", normalform.AddrKey(p.Addr), blocksText(p.Blocks))
}
func (p TokenScan) Describe() string {
	return fmt.Sprintf("index scan: touches token %s%s", p.Name, blocksText(p.Blocks))
}
func (p ProfitRange) Describe() string {
	side := "gross"
	if p.Side == layout.Net {
		side = "net"
	}
	r := func(s *normalform.Signed) string {
		if s == nil {
			return "∞"
		}
		return s.String()
	}
	lo := "-∞"
	if p.Lo != nil {
		lo = r(p.Lo)
	}
	return fmt.Sprintf("index range: %s profit in %s in [%s, %s] (base units)", side, p.Name, lo, r(p.Hi))
}
func (p TierScan) Describe() string {
	s := "index scan: verdict = " + p.Verdict.String()
	if p.Tier != nil {
		s += ", tier = " + p.Tier.String()
	}
	return s + blocksText(p.Blocks)
}
func (p BlockScan) Describe() string {
	return "index range: position" + blocksText(p.Blocks)
}
func (FullScan) Describe() string   { return "full scan (no index applies)" }
func (p TxLookup) Describe() string { return "index lookup: tx " + p.Tx.Hex() }

func (HashLookup) Inputs() []Plan  { return nil }
func (BotScan) Inputs() []Plan     { return nil }
func (AddressScan) Inputs() []Plan { return nil }
func (TokenScan) Inputs() []Plan   { return nil }
func (ProfitRange) Inputs() []Plan { return nil }
func (TierScan) Inputs() []Plan    { return nil }
func (BlockScan) Inputs() []Plan   { return nil }
func (FullScan) Inputs() []Plan    { return nil }
func (TxLookup) Inputs() []Plan    { return nil }

// --- operators ------------------------------------------------------------

// Filter keeps the records for which its predicate holds.
type Filter struct {
	Input Plan
	Pred  *Pred
}

func (p *Filter) Describe() string { return "filter: " + p.Pred.Text() }
func (p *Filter) Inputs() []Plan   { return []Plan{p.Input} }

// Sort orders records by a key.
type Sort struct {
	Input Plan
	Key   *SortKey
	Desc  bool
}

func (p *Sort) Describe() string {
	d := "asc"
	if p.Desc {
		d = "desc"
	}
	return "sort by " + p.Key.Text + " " + d
}
func (p *Sort) Inputs() []Plan { return []Plan{p.Input} }

// Limit stops after N rows.
type Limit struct {
	Input Plan
	N     int
}

func (p *Limit) Describe() string { return fmt.Sprintf("limit %d", p.N) }
func (p *Limit) Inputs() []Plan   { return []Plan{p.Input} }

// Group groups records and counts: transactions per key, or distinct bots
// or shapes per key.
type Group struct {
	Input Plan
	By    lang.GroupBy
	What  string // transactions, bots, shapes, families
}

func (p *Group) Describe() string {
	return fmt.Sprintf("group by %s, count %s, largest first", p.By, p.What)
}
func (p *Group) Inputs() []Plan { return []Plan{p.Input} }

// Compare is Q_eq / Q_fam: two transactions at a level.
type Compare struct {
	A, B  Plan
	Level normalform.Level
}

func (p *Compare) Describe() string {
	return fmt.Sprintf("compare canonical forms at level %s; report the first difference", p.Level)
}
func (p *Compare) Inputs() []Plan { return []Plan{p.A, p.B} }

// MatchRef is Q_match: the reference's hash at the level, then a lookup.
type MatchRef struct {
	Ref   Plan
	Level normalform.Level
	Then  Plan // the lookup (with the hash filled in at run time) and its operators
}

func (p *MatchRef) Describe() string {
	return fmt.Sprintf("read the reference's %s hash, then look it up", p.Level)
}
func (p *MatchRef) Inputs() []Plan { return []Plan{p.Ref, p.Then} }

// Anomalies is Q_anom over a bot's shapes.
type Anomalies struct {
	Bot      normalform.Address
	Since    *uint64
	Baseline *layout.BlockRange
	Limit    int
}

func (p *Anomalies) Describe() string {
	s := "anomalies: transactions of " + normalform.AddrKey(p.Bot) + " whose shape "
	switch {
	case p.Baseline != nil:
		s += fmt.Sprintf("is not among the shapes of blocks %d..%d", p.Baseline.From, p.Baseline.To)
	case p.Since != nil:
		s += fmt.Sprintf("it first used at block %d or later", *p.Since)
	default:
		s += "it had not used before"
	}
	return s
}
func (p *Anomalies) Inputs() []Plan {
	return []Plan{BotShapesScan{Bot: p.Bot}, BotScan{Bot: p.Bot, Blocks: layout.AllBlocks}}
}

// BotShapesScan reads a bot's shapes with their first transaction.
type BotShapesScan struct{ Bot normalform.Address }

func (p BotShapesScan) Describe() string {
	return "index scan: shapes first seen of bot " + normalform.AddrKey(p.Bot)
}
func (BotShapesScan) Inputs() []Plan { return nil }

// ShowTx renders one transaction.
type ShowTx struct {
	Input Plan
	Views []string
}

func (p *ShowTx) Describe() string { return "show " + strings.Join(p.Views, ", ") }
func (p *ShowTx) Inputs() []Plan   { return []Plan{p.Input} }
