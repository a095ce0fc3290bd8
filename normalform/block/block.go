// Package block reads the normal forms of one block, in transaction
// order, as a sequence (issue 18): the swaps each transaction made on each
// pool and in which direction, and the patterns built from them, whatever
// the protocol — sandwiches, back-runs — and what the block paid its
// builder. Every finding carries its evidence: the transactions, pools,
// directions and amounts.
//
// A swap of a transaction at a pool P is read from its normal form: P's
// balance over the transaction's transfers has exactly one token in (τ,
// what the trader sold) and one token out (τ', what it bought), and P is
// a venue, not a trader: it is not in the transaction's coalition (sender,
// recipient, arbitrage origins), not the coinbase, not a wrapped-native
// contract (wrapping is not a trade), and it is either the place of a
// Swap@P(τ, τ') term of the normal form or the origin of none of its
// chains (an executor that relays a bot's trade is an origin and is never
// a Swap junction). The balance, not the Swap terms alone, gives the
// amounts and also the swaps the kernel leaves as an open chain ending at
// the pool and a leftover leaving it (a router's swap for a user).
//
// A sandwich: an attacker (same sender, or same bot — the recipient,
// unless it is a configured public router) swaps τ→τ' on P, one or more
// other transactions swap τ→τ' on P after it, and the attacker swaps
// τ'→τ on P after them. Front and back legs pair by (front, back)
// transaction, so a sandwich may span several pools; each leg may be part
// of a larger route. Its gain is the attacker's coalition gross in τ over
// the front and back transactions (native and wrapped native folded when
// τ is either): what the engine's Gross holds, builder payments and
// payouts added back. Net subtracts both legs' costs (gas and builder
// payments) when known.
//
// A back-run: a transaction with an arbitrage whose swaps include one on a
// pool that an earlier transaction of the block (of another sender and
// bot) moved in the opposite direction; the largest such earlier swap is
// named as the one it corrects.
//
// A block given partly (transaction indexes with a gap, or not starting
// at 0) says so, and no finding spans a missing index: a sandwich needs
// every index from its front to its back, a back-run every index from 0
// to its own (the swap it corrects is the largest of all earlier ones).
package block

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// Report is what block analysis says of one block. Its fields are plain
// (hex addresses, token keys, decimal amounts in base units), so that it
// is its own JSON and its own stored form.
type Report struct {
	Block uint64 `json:"block"`
	// Partial is set when the transactions given do not hold every index
	// from 0 to the largest; Missing lists the absent ones.
	Partial bool  `json:"partial"`
	Missing []int `json:"missing,omitempty"`
	// Count is the number of transactions the block's header lists, when
	// an input gave the header (0: unknown).
	Count      int          `json:"count,omitempty"`
	Txs        []TxRow      `json:"txs"`
	Swaps      []Swap       `json:"swaps"`
	Sandwiches []Sandwich   `json:"sandwiches"`
	Backruns   []Backrun    `json:"backruns"`
	Builder    BuilderTotal `json:"builder"`
}

// TxRow is one transaction of the block, with its verdict and its roles
// in the findings.
type TxRow struct {
	Index   int      `json:"index"`
	Tx      string   `json:"tx"`
	From    string   `json:"from"`
	To      string   `json:"to"`
	Verdict string   `json:"verdict"`
	Tier    string   `json:"tier,omitempty"`
	Roles   []string `json:"roles,omitempty"`
}

// Swap is one transaction's trade at one pool: the trader sold AmountIn
// of In to the pool and bought AmountOut of Out.
type Swap struct {
	Index     int    `json:"index"`
	Tx        string `json:"tx"`
	Pool      string `json:"pool"`
	In        string `json:"token_in"`
	Out       string `json:"token_out"`
	AmountIn  string `json:"amount_in"`
	AmountOut string `json:"amount_out"`
	Sender    string `json:"sender"`
	Bot       string `json:"bot"`
}

// Sandwich is a front leg, the victims after it and a back leg, on one or
// more pools, by one attacker.
type Sandwich struct {
	Sender string `json:"sender"`
	Bot    string `json:"bot"`
	Front  Ref    `json:"front"`
	Back   Ref    `json:"back"`
	// Pools lists the pools, FrontSwaps and BackSwaps the legs' swaps on
	// them, Victims every swap between them in the front's direction.
	Pools      []string `json:"pools"`
	FrontSwaps []Swap   `json:"front_swaps"`
	BackSwaps  []Swap   `json:"back_swaps"`
	Victims    []Swap   `json:"victims"`
	// Token is τ, what the front sold and the back bought back; Gain the
	// attacker's gross in τ over both legs (signed decimal, base units);
	// Left what it kept of the other tokens (non-zero entries).
	Token string            `json:"token"`
	Gain  string            `json:"gain"`
	Left  map[string]string `json:"left,omitempty"`
	// BuilderPaid is what both legs paid the coinbase directly; Costs
	// their gas and builder payments; Net = Gain − Costs when τ is the
	// native asset or its wrapper and costs are known (else empty).
	BuilderPaid string `json:"builder_paid"`
	Costs       string `json:"costs,omitempty"`
	Net         string `json:"net,omitempty"`
}

// Ref names a transaction of the block.
type Ref struct {
	Index int    `json:"index"`
	Tx    string `json:"tx"`
}

// Backrun is an arbitrage that trades against the direction an earlier
// swap moved a pool.
type Backrun struct {
	Ref
	Sender string `json:"sender"`
	Bot    string `json:"bot"`
	// Token and Gain are its first detection's (gain in the token's unit).
	Token string `json:"token"`
	Gain  string `json:"gain"`
	// Swaps are its swaps on the pools it corrects, Corrects the earlier
	// swap it corrects on each (the largest in amount in), pairwise.
	Swaps    []Swap `json:"swaps"`
	Corrects []Swap `json:"corrects"`
}

// BuilderTotal is what the block paid its builder: the transactions'
// direct payments to the coinbase and their priority fees, in wei.
// Unknown counts transactions without a receipt (their fees unknown).
type BuilderTotal struct {
	Payments     string `json:"payments"`
	PriorityFees string `json:"priority_fees"`
	Total        string `json:"total"`
	Unknown      int    `json:"unknown_costs,omitempty"`
}

// Roles a transaction plays.
const (
	RoleFront     = "sandwich_front"
	RoleVictim    = "sandwich_victim"
	RoleBack      = "sandwich_back"
	RoleBackrun   = "backrun"
	RoleCorrected = "corrected"
)

// swap is a Swap with its values typed.
type swap struct {
	pos       int // position in the txs slice
	pool      normalform.Address
	in, out   normalform.Token
	amtIn     uint256.Int
	amtOut    uint256.Int
	sender    normalform.Address
	bot       normalform.Address
	hasSender bool
	router    bool // the bot is a configured router: not an identity
}

// Analyze reads the analyses of one block, in transaction order (by
// index; an analysis of another block, or without its index, is an
// error). It does not know how many transactions the block holds, so the
// missing ones it reports are those before the last one given; AnalyzeCount
// reports the trailing ones too.
func Analyze(blockNum uint64, txs []*normalform.Analysis, cfg *normalform.Config) (*Report, error) {
	return AnalyzeCount(blockNum, txs, cfg, -1)
}

// AnalyzeCount is Analyze for a block known to hold count transactions (its
// header's list, trace.Result.BlockTxs; count < 0 when unknown): the
// indexes from the last one given up to count are missing too, and a
// transaction given at an index of count or more is an error.
func AnalyzeCount(blockNum uint64, txs []*normalform.Analysis, cfg *normalform.Config, count int) (*Report, error) {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	facts := make([]*TxFacts, len(txs))
	for i, a := range txs {
		facts[i] = FactsOf(a, cfg)
	}
	return AnalyzeFacts(blockNum, facts, cfg, count)
}

// TxFacts is what block analysis reads of one transaction's analysis
// (FactsOf): its place, parties, verdict, swaps, costs, gross and first
// detection. An ingest keeps them from its own analyses, so that a
// block's findings need not decode its records again (index.RefreshBlocks).
type TxFacts struct {
	Hash              normalform.Hash
	Block             uint64
	Index             int
	HasBlock          bool
	HasIndex          bool
	HasFrom           bool
	Sender, Recipient normalform.Address
	Verdict           normalform.Verdict
	Tier              normalform.Tier
	swaps             []swap // pos unset
	Costs             normalform.Costs
	Gross             []normalform.DeltaEntry
	// Detected: the analysis has a detection; DetToken (its unit) and
	// DetGain are its first's.
	Detected bool
	DetToken normalform.Token
	DetGain  string
}

// FactsOf reads what block analysis needs of an analysis, under cfg
// (nil: Ethereum defaults).
func FactsOf(a *normalform.Analysis, cfg *normalform.Config) *TxFacts {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	m := &a.Tx.Meta
	f := &TxFacts{Hash: m.Hash, Block: m.Block, Index: m.Index, HasBlock: m.HasBlock, HasIndex: m.HasIndex, HasFrom: m.HasFrom,
		Sender: a.Sender, Recipient: a.Recipient, Verdict: a.Verdict, Tier: a.Tier, Costs: a.Costs,
		Gross: append([]normalform.DeltaEntry(nil), a.Gross...)}
	// The swaps gathered in pooled room, then kept at their size.
	buf := swapBufs.Get().(*[]swap)
	if got := swapsOf((*buf)[:0], a, cfg); len(got) > 0 {
		f.swaps = slices.Clone(got)
		*buf = got[:0]
	}
	if cap(*buf) <= 4096 {
		swapBufs.Put(buf)
	}
	if len(a.Detections) > 0 {
		d := a.Detections[0]
		f.Detected, f.DetToken, f.DetGain = true, cfg.Unit(d.Token), d.Gain.String()
	}
	return f
}

// swapBufs are FactsOf's room for a transaction's swaps.
var swapBufs = sync.Pool{New: func() any { return new([]swap) }}

// AnalyzeFacts is AnalyzeCount over the transactions' facts (FactsOf,
// under the same cfg).
func AnalyzeFacts(blockNum uint64, txs []*TxFacts, cfg *normalform.Config, count int) (*Report, error) {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	for i, m := range txs {
		if !m.HasBlock || m.Block != blockNum {
			return nil, fmt.Errorf("block %d: tx %s is not of this block", blockNum, m.Hash.Hex())
		}
		if !m.HasIndex {
			return nil, fmt.Errorf("block %d: tx %s has no index in its block", blockNum, m.Hash.Hex())
		}
		if i > 0 && txs[i-1].Index >= m.Index {
			return nil, fmt.Errorf("block %d: transactions not in index order (%d before %d)", blockNum, txs[i-1].Index, m.Index)
		}
		if count >= 0 && m.Index >= count {
			return nil, fmt.Errorf("block %d: tx %s has index %d, but the block's header lists %d transactions", blockNum, m.Hash.Hex(), m.Index, count)
		}
	}
	r := &Report{Block: blockNum, Swaps: []Swap{}, Sandwiches: []Sandwich{}, Backruns: []Backrun{}}
	texts := &txTexts{txs: txs, texts: make([]string, len(txs))}
	present := map[int]bool{}
	for _, a := range txs {
		present[a.Index] = true
	}
	upTo := count // the indexes the block holds, when known
	if n := len(txs); upTo < 0 && n > 0 {
		upTo = txs[n-1].Index
	}
	for i := 0; i < upTo; i++ {
		if !present[i] {
			r.Missing = append(r.Missing, i)
		}
	}
	r.Partial = len(r.Missing) > 0
	// whole reports whether every index from tx position i to j is present.
	// (r.Missing is sorted: the first missing index at or after i's.)
	whole := func(i, j int) bool {
		k := sort.SearchInts(r.Missing, txs[i].Index)
		return k == len(r.Missing) || r.Missing[k] > txs[j].Index
	}
	roles := make([][]string, len(txs))
	addRole := func(pos int, role string) {
		for _, x := range roles[pos] {
			if x == role {
				return
			}
		}
		roles[pos] = append(roles[pos], role)
	}

	// Swaps, per transaction in order, pools in address order.
	// The swaps are copies (the facts are the caller's), in one slice.
	nswaps := 0
	for _, a := range txs {
		nswaps += len(a.swaps)
	}
	own := make([]swap, 0, nswaps)
	all := make([]*swap, 0, nswaps)
	byPool := map[normalform.Address][]*swap{}
	swapsAt := make([][]*swap, len(txs))
	var builderPay, prio uint256.Int
	for pos, a := range txs {
		at := len(own)
		own = append(own, a.swaps...)
		for i := at; i < len(own); i++ {
			s := &own[i]
			s.pos = pos
			all = append(all, s)
			byPool[s.pool] = append(byPool[s.pool], s)
		}
		swapsAt[pos] = all[at:len(all):len(all)]
		if a.Costs.Known {
			prio.Add(&prio, &a.Costs.Priority)
		} else {
			r.Builder.Unknown++
		}
		builderPay.Add(&builderPay, &a.Costs.Builder)
	}
	r.Swaps = make([]Swap, 0, len(all))
	for _, s := range all {
		r.Swaps = append(r.Swaps, render(texts, s))
	}
	var total uint256.Int
	total.Add(&builderPay, &prio)
	r.Builder.Payments, r.Builder.PriorityFees, r.Builder.Total = builderPay.Dec(), prio.Dec(), total.Dec()

	// Sandwiches: per pool, each front with the first reverse swap of its
	// attacker after it; grouped by (front, back) transaction.
	type pair struct{ front, back int }
	groups := map[pair]*Sandwich{}
	var order []pair
	pools := make([]normalform.Address, 0, len(byPool))
	for p := range byPool {
		pools = append(pools, p)
	}
	// In the order of their lower-case hex, which is their bytes' order
	// (digits before letters in ASCII, as nibbles are; no text made).
	slices.SortFunc(pools, func(a, b normalform.Address) int { return bytes.Compare(a[:], b[:]) })
	// Each front's closing swap is the attacker's first reverse swap on
	// the pool after it, found through the pool's swaps per sender and per
	// bot and direction (positions in the pool's list, ascending).
	type who struct {
		a       normalform.Address
		in, out normalform.Token
	}
	next := func(l []int, i int) int {
		if k := sort.SearchInts(l, i+1); k < len(l) {
			return l[k]
		}
		return -1
	}
	bySender, byBot := map[who][]int{}, map[who][]int{}
	for _, p := range pools {
		list := byPool[p]
		clear(bySender)
		clear(byBot)
		for j, s := range list {
			if s.hasSender {
				bySender[who{s.sender, s.in, s.out}] = append(bySender[who{s.sender, s.in, s.out}], j)
			}
			byBot[who{s.bot, s.in, s.out}] = append(byBot[who{s.bot, s.in, s.out}], j)
		}
		usedBack := map[*swap]bool{}
		for i, f := range list {
			if usedBack[f] {
				continue
			}
			j := -1
			if f.hasSender {
				j = next(bySender[who{f.sender, f.out, f.in}], i)
			}
			if !f.router {
				if k := next(byBot[who{f.bot, f.out, f.in}], i); k >= 0 && (j < 0 || k < j) {
					j = k
				}
			}
			if j >= 0 {
				b := list[j]
				var victims []*swap
				for k := i + 1; k < j; k++ {
					v := list[k]
					if v.pos > f.pos && v.pos < b.pos && v.in == f.in && v.out == f.out && !sameAttacker(f, v) {
						victims = append(victims, v)
					}
				}
				if len(victims) > 0 && whole(f.pos, b.pos) {
					usedBack[b] = true
					k := pair{f.pos, b.pos}
					sw := groups[k]
					if sw == nil {
						sw = &Sandwich{Sender: hexOf(f.sender), Bot: hexOf(f.bot), Front: ref(texts, f.pos), Back: ref(texts, b.pos), Token: f.in.Key()}
						groups[k] = sw
						order = append(order, k)
					}
					sw.Pools = append(sw.Pools, hexOf(p))
					sw.FrontSwaps = append(sw.FrontSwaps, render(texts, f))
					sw.BackSwaps = append(sw.BackSwaps, render(texts, b))
					for _, v := range victims {
						sw.Victims = append(sw.Victims, render(texts, v))
						addRole(v.pos, RoleVictim)
					}
					addRole(f.pos, RoleFront)
					addRole(b.pos, RoleBack)
				}
			}
		}
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].front != order[j].front {
			return order[i].front < order[j].front
		}
		return order[i].back < order[j].back
	})
	for _, k := range order {
		sw := groups[k]
		sort.SliceStable(sw.Victims, func(i, j int) bool { return sw.Victims[i].Index < sw.Victims[j].Index })
		if err := gain(sw, txs[k.front], txs[k.back], cfg); err != nil {
			return nil, fmt.Errorf("block %d: sandwich %s..%s: %w", blockNum, sw.Front.Tx, sw.Back.Tx, err)
		}
		r.Sandwiches = append(r.Sandwiches, *sw)
	}

	// Back-runs. The swap a back-run corrects is the largest of every
	// earlier transaction's: a back-run is found only when all of them
	// are given (indexes 0 to its own). The earlier swaps are kept per
	// pool and direction, largest amount in first (the later first among
	// equals), so that the one corrected is the first not by the same
	// attacker.
	type dir struct {
		pool    normalform.Address
		in, out normalform.Token
	}
	earlier := map[dir][]*swap{}
	for pos, a := range txs {
		if a.Detected && (len(r.Missing) == 0 || r.Missing[0] > a.Index) {
			var br *Backrun
			for _, s := range swapsAt[pos] {
				var best *swap
				for _, e := range earlier[dir{s.pool, s.out, s.in}] {
					if !sameAttacker(e, s) {
						best = e
						break
					}
				}
				if best == nil {
					continue
				}
				if br == nil {
					br = &Backrun{Ref: ref(texts, pos), Sender: hexOf(a.Sender), Bot: hexOf(a.Recipient),
						Token: a.DetToken.Key(), Gain: a.DetGain}
				}
				br.Swaps = append(br.Swaps, render(texts, s))
				br.Corrects = append(br.Corrects, render(texts, best))
				addRole(best.pos, RoleCorrected)
			}
			if br != nil {
				addRole(pos, RoleBackrun)
				r.Backruns = append(r.Backruns, *br)
			}
		}
		for _, s := range swapsAt[pos] {
			k := dir{s.pool, s.in, s.out}
			l := earlier[k]
			i := sort.Search(len(l), func(i int) bool { return l[i].amtIn.Cmp(&s.amtIn) <= 0 })
			l = append(l, nil)
			copy(l[i+1:], l[i:])
			l[i] = s
			earlier[k] = l
		}
	}

	if len(txs) > 0 {
		r.Txs = make([]TxRow, 0, len(txs))
	}
	for pos, a := range txs {
		sortRoles(roles[pos]) // the order Roles gives
		row := TxRow{Index: a.Index, Tx: texts.at(pos), From: hexOf(a.Sender), To: hexOf(a.Recipient),
			Verdict: a.Verdict.String(), Roles: roles[pos]}
		if a.Tier != normalform.TierNone {
			row.Tier = a.Tier.String()
		}
		r.Txs = append(r.Txs, row)
	}
	return r, nil
}

// swapScratch is swapsOf's storage, pooled: the addresses in first-seen
// order, each with the head and tail of its entries' list; an index of
// them by address once there are more than a few (below, a scan).
type swapScratch struct {
	parties []swapParty
	ents    []swapEntry
	at      map[normalform.Address]int32
}

type swapParty struct {
	addr       normalform.Address
	head, tail int32
}

type swapEntry struct {
	tok  normalform.Token
	bal  normalform.Signed
	next int32 // the address's next entry; -1: none
}

var swapScratches = sync.Pool{New: func() any { return &swapScratch{at: map[normalform.Address]int32{}} }}

// swapScan is how many addresses swapsOf looks through before it indexes them.
const swapScan = 12

// originScan is how many origins and junctions swapsOf scans; past it,
// sets (a variable: the tests take both paths).
var originScan = 64

// find returns addr's index in s.parties, adding it when new.
func (s *swapScratch) find(addr normalform.Address) int32 {
	n := int32(len(s.parties))
	if n <= swapScan {
		for i := range s.parties {
			if s.parties[i].addr == addr {
				return int32(i)
			}
		}
		if n == swapScan {
			for i := range s.parties {
				s.at[s.parties[i].addr] = int32(i)
			}
		}
	} else if i, ok := s.at[addr]; ok {
		return i
	}
	s.parties = append(s.parties, swapParty{addr: addr, head: -1, tail: -1})
	if n >= swapScan {
		s.at[addr] = n
	}
	return n
}

// put returns s to the pool unless it grew large.
func (s *swapScratch) put() {
	if cap(s.ents) > 4096 || cap(s.parties) > 4096 {
		return
	}
	s.parties, s.ents = s.parties[:0], s.ents[:0]
	clear(s.at)
	swapScratches.Put(s)
}

// swapsOf reads a transaction's swaps (package doc), appending them to
// out (pos unset: FactsOf's callers place them).
//
// Balances are kept per address, in first-seen order, as a short list of
// (token, balance) pairs: a pool sees two or three tokens, so a linear
// scan beats a map keyed by (address, token) (issue 22). The origins and
// swap junctions of the normal form are read only when a candidate pool
// is an origin.
func swapsOf(out []swap, a *normalform.Analysis, cfg *normalform.Config) []swap {
	if a.Tx.Meta.HasReceipt && a.Tx.Meta.Status == normalform.StatusFailed {
		return out
	}
	// Balances per address and token, mints and burns left out: each
	// address's (token, balance) entries are a list through sc.ents.
	sc := swapScratches.Get().(*swapScratch)
	defer sc.put()
	add := func(addr normalform.Address, tok *normalform.Token, v *uint256.Int, neg bool) {
		i := sc.find(addr)
		p := &sc.parties[i]
		for k := p.head; k >= 0; k = sc.ents[k].next {
			if e := &sc.ents[k]; e.tok == *tok {
				e.bal.Add(v, neg) // an overflow needs adversarial amounts; the pool then reads as no swap
				return
			}
		}
		sc.ents = append(sc.ents, swapEntry{tok: *tok, next: -1})
		k := int32(len(sc.ents) - 1)
		sc.ents[k].bal.Add(v, neg)
		if p.head < 0 {
			p.head = k
		} else {
			sc.ents[p.tail].next = k
		}
		p.tail = k
	}
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		if t.Token.HasID() || t.From == t.To {
			continue
		}
		add(t.From, &t.Token, &t.Amount, true)
		add(t.To, &t.Token, &t.Amount, false)
	}
	// bareOrigin: p is the origin of a chain of the normal form and no
	// swap junction of its terms. Both lists are gathered at the first
	// candidate pool; a few addresses, scanned (past originScan, sets).
	var origins, junctions []normalform.Address
	var originSet, junctionSet map[normalform.Address]bool
	gathered := false
	var walk func(t *normalform.Term)
	walk = func(t *normalform.Term) {
		if t.Kind == normalform.TSwap {
			junctions = append(junctions, t.At)
		}
		for _, p := range t.Parts {
			walk(p)
		}
	}
	bareOrigin := func(p normalform.Address) bool {
		if !gathered {
			gathered = true
			if a.NF != nil {
				for _, n := range a.NF.Children {
					if n.Chain != nil {
						origins = append(origins, n.Chain.Origin())
					}
				}
			}
			if len(origins) > 0 {
				for _, t := range a.Terms() {
					walk(t)
				}
			}
			if len(origins)+len(junctions) > originScan { // a large normal form: sets
				originSet, junctionSet = map[normalform.Address]bool{}, map[normalform.Address]bool{}
				for _, o := range origins {
					originSet[o] = true
				}
				for _, j := range junctions {
					junctionSet[j] = true
				}
			}
		}
		if originSet != nil {
			return originSet[p] && !junctionSet[p]
		}
		return slices.Contains(origins, p) && !slices.Contains(junctions, p)
	}
	var zero normalform.Address
	first := len(out)
	for pi := range sc.parties {
		pt := &sc.parties[pi]
		var in, out1 *swapEntry
		nin, nout := 0, 0
		for k := pt.head; k >= 0; k = sc.ents[k].next {
			e := &sc.ents[k]
			switch e.bal.Sign() {
			case 1:
				nin++
				in = e
			case -1:
				nout++
				out1 = e
			}
		}
		if nin != 1 || nout != 1 {
			continue
		}
		p := pt.addr
		if p == zero || p == normalform.NativeAddress || a.InCoalition(p) || cfg.IsWrappedNative(p) ||
			(a.Tx.Meta.HasHeader && p == a.Tx.Meta.Miner) || bareOrigin(p) {
			continue
		}
		out = append(out, swap{pool: p, in: in.tok, out: out1.tok, sender: a.Sender, bot: a.Recipient,
			hasSender: a.Tx.Meta.HasFrom, router: cfg.IsRouter(a.Recipient), amtIn: in.bal.Abs, amtOut: out1.bal.Abs})
	}
	mine := out[first:]
	slices.SortFunc(mine, func(x, y swap) int { return bytes.Compare(x.pool[:], y.pool[:]) }) // pools are distinct parties
	return out
}

// sameAttacker: the same sender, or the same bot (a configured router is
// everyone's, not a bot).
func sameAttacker(x, y *swap) bool {
	if x.hasSender && y.hasSender && x.sender == y.sender {
		return true
	}
	return x.bot == y.bot && !x.router
}

// gain fills a sandwich's gain, what it left, builder payments, costs
// and net from its two legs' analyses.
func gain(sw *Sandwich, front, back *TxFacts, cfg *normalform.Config) error {
	tau := parseToken(sw.Token)
	native := cfg.TokenEq(tau, normalform.NativeToken)
	g := new(big.Int)
	left := map[string]*big.Int{}
	var paid, costs uint256.Int
	known := true
	for _, a := range []*TxFacts{front, back} {
		for _, e := range a.Gross {
			v := e.Amount.Abs.ToBig()
			if e.Amount.Neg {
				v.Neg(v)
			}
			if cfg.TokenEq(e.Token, tau) {
				g.Add(g, v)
				continue
			}
			k := e.Token.Key()
			if left[k] == nil {
				left[k] = new(big.Int)
			}
			left[k].Add(left[k], v)
		}
		paid.Add(&paid, &a.Costs.Builder)
		costs.Add(&costs, &a.Costs.Total)
		known = known && a.Costs.Known
	}
	sw.Gain = g.String()
	for k, v := range left {
		if v.Sign() != 0 {
			if sw.Left == nil {
				sw.Left = map[string]string{}
			}
			sw.Left[k] = v.String()
		}
	}
	sw.BuilderPaid = paid.Dec()
	if known {
		sw.Costs = costs.Dec()
		if native {
			sw.Net = new(big.Int).Sub(g, costs.ToBig()).String()
		}
	}
	return nil
}

// txTexts are the hex texts of a block's transaction hashes, made once
// each (a transaction's swaps, findings and row share them).
type txTexts struct {
	txs   []*TxFacts
	texts []string
}

func (t *txTexts) at(pos int) string {
	if t.texts[pos] == "" {
		t.texts[pos] = t.txs[pos].Hash.Hex()
	}
	return t.texts[pos]
}

func ref(txs *txTexts, pos int) Ref {
	return Ref{Index: txs.txs[pos].Index, Tx: txs.at(pos)}
}

func render(txs *txTexts, s *swap) Swap {
	return Swap{Index: txs.txs[s.pos].Index, Tx: txs.at(s.pos), Pool: hexOf(s.pool), In: s.in.Key(), Out: s.out.Key(),
		AmountIn: s.amtIn.Dec(), AmountOut: s.amtOut.Dec(), Sender: hexOf(s.sender), Bot: hexOf(s.bot)}
}

func hexOf(a normalform.Address) string { return normalform.AddrKey(a) }

// parseToken reads a token key of a fungible token or the native asset.
func parseToken(k string) normalform.Token {
	a := normalform.Address{}
	if b, ok := new(big.Int).SetString(strings.TrimPrefix(k, "0x"), 16); ok && len(k) == 42 {
		b.FillBytes(a[:])
	}
	if a == normalform.NativeAddress {
		return normalform.NativeToken
	}
	return normalform.FungibleToken(a)
}

// Text renders the report for people: the transactions in order with
// their verdicts and roles, then each finding with its evidence, then
// what the block paid its builder.
func (r *Report) Text(cfg *normalform.Config) string {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "block %d  %d transactions  %d swaps  %d sandwiches  %d back-runs\n", r.Block, len(r.Txs), len(r.Swaps), len(r.Sandwiches), len(r.Backruns))
	if r.Partial {
		fmt.Fprintf(&b, "  partial: indexes %s missing; no finding spans them\n", joinInts(r.Missing))
	}
	for _, t := range r.Txs {
		v := t.Verdict
		if t.Tier != "" {
			v += " (" + t.Tier + ")"
		}
		fmt.Fprintf(&b, "  %3d %s  %s → %s  %s", t.Index, t.Tx, short(t.From), short(t.To), v)
		if len(t.Roles) > 0 {
			fmt.Fprintf(&b, "  [%s]", strings.Join(t.Roles, ", "))
		}
		b.WriteByte('\n')
	}
	for i, s := range r.Sandwiches {
		tau := parseToken(s.Token)
		fmt.Fprintf(&b, "sandwich %d by bot %s (sender %s): gain %s", i+1, short(s.Bot), short(s.Sender), signed(cfg, s.Gain, tau))
		if s.Net != "" {
			fmt.Fprintf(&b, ", net %s", signed(cfg, s.Net, normalform.NativeToken))
		}
		fmt.Fprintf(&b, ", builder paid %s\n", cfg.FormatAmount(u256(s.BuilderPaid), normalform.NativeToken))
		fmt.Fprintf(&b, "  front %d %s\n", s.Front.Index, s.Front.Tx)
		for _, w := range s.FrontSwaps {
			b.WriteString(swapLine(cfg, "    ", w))
		}
		for _, w := range s.Victims {
			fmt.Fprintf(&b, "  victim %d %s\n", w.Index, w.Tx)
			b.WriteString(swapLine(cfg, "    ", w))
		}
		fmt.Fprintf(&b, "  back %d %s\n", s.Back.Index, s.Back.Tx)
		for _, w := range s.BackSwaps {
			b.WriteString(swapLine(cfg, "    ", w))
		}
		if len(s.Left) > 0 {
			keys := make([]string, 0, len(s.Left))
			for k := range s.Left {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var parts []string
			for _, k := range keys {
				parts = append(parts, signed(cfg, s.Left[k], parseToken(k)))
			}
			fmt.Fprintf(&b, "  left with %s\n", strings.Join(parts, ", "))
		}
	}
	for i, br := range r.Backruns {
		fmt.Fprintf(&b, "back-run %d: tx %d %s by bot %s, arbitrage gain %s\n", i+1, br.Index, br.Tx, short(br.Bot), signed(cfg, br.Gain, parseToken(br.Token)))
		for j := range br.Swaps {
			b.WriteString(swapLine(cfg, "    ", br.Swaps[j]))
			fmt.Fprintf(&b, "    corrects tx %d %s:\n", br.Corrects[j].Index, br.Corrects[j].Tx)
			b.WriteString(swapLine(cfg, "      ", br.Corrects[j]))
		}
	}
	fmt.Fprintf(&b, "builder: %s (payments %s, priority fees %s)", cfg.FormatAmount(u256(r.Builder.Total), normalform.NativeToken),
		cfg.FormatAmount(u256(r.Builder.Payments), normalform.NativeToken), cfg.FormatAmount(u256(r.Builder.PriorityFees), normalform.NativeToken))
	if r.Builder.Unknown > 0 {
		fmt.Fprintf(&b, "; %d transactions without a receipt (fees unknown)", r.Builder.Unknown)
	}
	b.WriteByte('\n')
	return b.String()
}

func swapLine(cfg *normalform.Config, indent string, s Swap) string {
	in, out := parseToken(s.In), parseToken(s.Out)
	return fmt.Sprintf("%s%s: %s %s→%s, sold %s, bought %s\n", indent, short(s.Pool), "swap", cfg.TokenName(in), cfg.TokenName(out),
		cfg.FormatAmount(u256(s.AmountIn), in), cfg.FormatAmount(u256(s.AmountOut), out))
}

func short(a string) string {
	if len(a) != 42 {
		return a
	}
	return a[:6] + "…" + a[38:]
}

func u256(s string) *uint256.Int {
	v, err := uint256.FromDecimal(s)
	if err != nil {
		return new(uint256.Int)
	}
	return v
}

func signed(cfg *normalform.Config, s string, t normalform.Token) string {
	neg := strings.HasPrefix(s, "-")
	v := normalform.Signed{Neg: neg, Abs: *u256(strings.TrimPrefix(s, "-"))}
	return cfg.FormatSigned(v, t)
}

func joinInts(xs []int) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, ", ")
}
