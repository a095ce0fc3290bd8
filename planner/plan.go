package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// Source is what the planner needs of an index. *index.Index satisfies it.
type Source interface {
	Get(tx normalform.Hash) (*index.Record, error)
	ByHash(ctx context.Context, level normalform.Level, h normalform.Hash, blocks index.BlockRange, fn func(index.Ref) error) error
	ByBot(ctx context.Context, bot normalform.Address, blocks index.BlockRange, fn func(shape normalform.Hash, r index.Ref) error) error
	BotShapes(ctx context.Context, bot normalform.Address, fn func(shape normalform.Hash, first index.Ref) error) error
	ByBlocks(ctx context.Context, blocks index.BlockRange, fn func(index.Ref) error) error
	ByTier(ctx context.Context, v normalform.Verdict, t normalform.Tier, blocks index.BlockRange, fn func(index.Ref) error) error
	ByVerdict(ctx context.Context, v normalform.Verdict, blocks index.BlockRange, fn func(t normalform.Tier, r index.Ref) error) error
	ByProfit(ctx context.Context, side index.Side, tok normalform.Token, lo, hi *normalform.Signed, fn func(amount normalform.Signed, r index.Ref) error) error
	ByAddress(ctx context.Context, a normalform.Address, blocks index.BlockRange, fn func(index.Ref) error) error
	ByToken(ctx context.Context, tok normalform.Token, blocks index.BlockRange, fn func(index.Ref) error) error
	Records(ctx context.Context, blocks index.BlockRange, fn func(*index.Record) error) error
}

var _ Source = (*index.Index)(nil)

// Fetcher is what a Source may offer beyond Source (*index.Index does):
// the records a secondary-key access path finds, each read once in the
// path's own read transaction (index.Index.Fetch), and a scan of a block
// range that decides on each record's header before decoding it whole
// (index.Index.Filter). The executor uses them when its source has them;
// the rows are the same either way.
type Fetcher interface {
	Fetch(ctx context.Context, lk index.Lookup, fn func(*index.Record) error) error
	Filter(ctx context.Context, blocks index.BlockRange, addrs bool, match func(*index.Record) (bool, error), whole bool, fn func(*index.Record) error) error
}

var _ Fetcher = (*index.Index)(nil)

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

func blocksText(b index.BlockRange) string {
	if b == index.AllBlocks {
		return ""
	}
	to := fmt.Sprint(b.To)
	if b.To >= index.AllBlocks.To-1 {
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
	Blocks index.BlockRange
}

// BotScan reads a bot's transactions (the bot index).
type BotScan struct {
	Bot    normalform.Address
	Blocks index.BlockRange
}

// AddressScan reads the transactions touching an address: as a sender,
// receiver or principal and, with AsToken, as the token moved.
type AddressScan struct {
	Addr    normalform.Address
	AsToken bool
	Blocks  index.BlockRange
}

// TokenScan reads the transactions moving a token.
type TokenScan struct {
	Token  normalform.Token
	Name   string
	Blocks index.BlockRange
}

// ProfitRange reads the transactions whose gross or net balance in a token
// lies in a range, in amount order.
type ProfitRange struct {
	Side   index.Side
	Token  normalform.Token
	Name   string
	Lo, Hi *normalform.Signed
}

// TierScan reads the transactions with a verdict, and a tier when set.
type TierScan struct {
	Verdict normalform.Verdict
	Tier    *normalform.Tier
	Blocks  index.BlockRange
}

// BlockScan reads a block range in position order.
type BlockScan struct{ Blocks index.BlockRange }

// FullScan reads every record.
type FullScan struct{}

// TxLookup reads one transaction by hash.
type TxLookup struct{ Tx normalform.Hash }

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
	if p.Side == index.Net {
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
	Baseline *index.BlockRange
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
	return []Plan{BotShapesScan{Bot: p.Bot}, BotScan{Bot: p.Bot, Blocks: index.AllBlocks}}
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
