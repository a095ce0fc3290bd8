// Package workload generates SYNTHETIC transactions for scale runs of the
// index (issue 8): a million transactions to ingest and query, derived from
// the real scenarios' shapes.
//
// Nothing it produces happened on a chain. Each synthetic transaction is a
// copy of one scenario transaction (examples/scenarios/geth/*.json: the
// geth callTracer frame and the receipt, exactly as the node returned them)
// in which
//
//   - every address is rewritten consistently within the transaction: the
//     sender to one of Options.Senders externally owned accounts, the
//     called contract (the bot, or a router) to one of Options.Bots
//     contracts (both drawn with a skew, so that some bots are busy), and
//     every other address (pools, intermediaries, recipients) to a fresh
//     one; the token contracts (emitters of Transfer, TransferSingle,
//     TransferBatch, Deposit and Withdrawal logs), the block's miner and
//     the zero address are kept, as real traffic reuses a few tokens;
//   - every transferred amount (a frame's value and the data word of a
//     Transfer, Deposit or Withdrawal log) and the gas price are multiplied
//     by one factor per transaction, from 1 to 1000, which keeps the sign
//     of every balance, gross and net (so the verdicts too);
//   - the transaction hash, block number, block hash and index are fresh.
//
// So the structural hashes at the shape and family levels repeat as they
// do in real traffic (the same strategy through other pools), the tokens
// level repeats per scenario, and the exact hashes differ. Transactions are
// grouped into blocks and each block is one bundle ({"block", "receipts",
// "traces"}, the shape of index/fetch's block bundles), which ingest.Ingest
// decodes with normalform/trace like any other input.
//
// The output is a function of the scenarios, the seed and the options.
package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Options shape a workload. Zero values take the defaults.
type Options struct {
	Seed       int64
	FirstBlock uint64 // default 20,000,000
	BlockTxs   int    // transactions per block (default 100)
	Bots       int    // distinct bot contracts (default 2,000)
	Senders    int    // distinct senders (default 20,000)
	// Weights gives a scenario (by name, without .json) a relative
	// frequency; absent scenarios weigh DefaultWeights' figure, or 10
	// (0 leaves one out). nil: DefaultWeights.
	Weights map[string]int
}

// DefaultWeights make the two large worked examples of the paper (star_r,
// 12 frames, and star_s, about 200 KB of trace) rarer than the other
// scenarios (weight 10 each), as large transactions are in real traffic.
var DefaultWeights = map[string]int{"star_r": 2, "star_s": 1}

// Event signatures whose logs carry transfers.
const (
	sigTransfer       = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
	sigTransferSingle = "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62"
	sigTransferBatch  = "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb"
	sigDeposit        = "0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c"
	sigWithdrawal     = "0x7fcf532c15f0a6db0bd6d0e038bea71d30d808c7d98cb3bf7268a95bf5081b65"
)

var (
	reAddr = regexp.MustCompile(`^0x[0-9a-f]{40}$`)
	reSlot = regexp.MustCompile(`@@([AQWHBKI])([0-9]*)@@`)
)

// slot kinds in a template
const (
	slotAddr   = 'A' // 40 hex digits of address i
	slotQty    = 'Q' // hex quantity: amount i, scaled
	slotWord   = 'W' // 64 hex digits: amount i, scaled
	slotHash   = 'H' // the transaction hash
	slotBlock  = 'B' // the block number (hex quantity)
	slotBlkHsh = 'K' // the block hash
	slotIndex  = 'I' // the index in the block (hex quantity)
)

type piece struct {
	lit  []byte
	kind byte // 0: literal only
	i    int
}

// template is one scenario transaction with its variable parts cut out.
type template struct {
	name    string
	trace   []piece // the callTracer frame
	receipt []piece
	addrs   []string   // original addresses, by slot index
	keep    []bool     // kept unchanged (tokens, miner, zero)
	kept    [][20]byte // the kept addresses decoded (by slot; BlockAppend fills it once)
	sender  int        // slot of the top frame's from, or -1
	bot     int        // slot of the top frame's to, or -1
	amounts []*big.Int
}

// Generator produces synthetic blocks.
type Generator struct {
	opt     Options
	tpls    []*template
	cum     []int // cumulative weights
	header  map[string]any
	rng     *rand.Rand
	block   uint64
	tx      uint64
	scratch []byte
	// bots and eoas: the addresses of the bots and senders drawn so far.
	bots, eoas map[uint64][20]byte
	// addrBuf holds a block's transactions' addresses (reused by the next)
	addrBuf [][20]byte
	amount  big.Int // render's product

}

// New builds a generator from scenario bundles (name → file content).
func New(scenarios map[string][]byte, opt Options) (*Generator, error) {
	if opt.FirstBlock == 0 {
		opt.FirstBlock = 20_000_000
	}
	if opt.BlockTxs <= 0 {
		opt.BlockTxs = 100
	}
	if opt.Bots <= 0 {
		opt.Bots = 2000
	}
	if opt.Senders <= 0 {
		opt.Senders = 20000
	}
	g := &Generator{opt: opt, rng: rand.New(rand.NewSource(opt.Seed)), block: opt.FirstBlock,
		bots: map[uint64][20]byte{}, eoas: map[uint64][20]byte{}}
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range names {
		ws := opt.Weights
		if ws == nil {
			ws = DefaultWeights
		}
		w, ok := ws[n]
		if !ok {
			w = 10
		}
		if w <= 0 {
			continue
		}
		t, header, err := newTemplate(n, scenarios[n])
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", n, err)
		}
		if g.header == nil {
			g.header = header
		}
		total += w
		g.tpls = append(g.tpls, t)
		g.cum = append(g.cum, total)
	}
	if len(g.tpls) == 0 {
		return nil, errors.New("workload: no scenarios")
	}
	return g, nil
}

// Shapes names the scenarios the generator draws from.
func (g *Generator) Shapes() []string {
	out := make([]string, len(g.tpls))
	for i, t := range g.tpls {
		out[i] = t.name
	}
	return out
}

func newTemplate(name string, data []byte) (*template, map[string]any, error) {
	var b struct {
		Block    map[string]any   `json:"block"`
		Receipts []map[string]any `json:"receipts"`
		Traces   map[string]any   `json:"traces"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&b); err != nil {
		return nil, nil, err
	}
	if b.Block == nil || len(b.Receipts) != 1 || b.Traces == nil {
		return nil, nil, errors.New("not a one-transaction bundle with block, receipts and a callTracer frame")
	}
	t := &template{name: name, sender: -1, bot: -1}
	idx := map[string]int{}
	keep := map[string]bool{"0x0000000000000000000000000000000000000000": true}
	if m, ok := b.Block["miner"].(string); ok {
		keep[strings.ToLower(m)] = true
	}
	// Token contracts: emitters of transfer-carrying logs.
	var tokens func(v any)
	tokens = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if tp, ok := x["topics"].([]any); ok && len(tp) > 0 {
				if s, _ := tp[0].(string); transferSig(s) {
					if a, ok := x["address"].(string); ok {
						keep[strings.ToLower(a)] = true
					}
				}
			}
			for _, y := range x {
				tokens(y)
			}
		case []any:
			for _, y := range x {
				tokens(y)
			}
		}
	}
	tokens(b.Traces)
	tokens(b.Receipts[0])
	addr := func(s string) string {
		s = strings.ToLower(s)
		i, ok := idx[s]
		if !ok {
			i = len(t.addrs)
			idx[s] = i
			t.addrs = append(t.addrs, s)
			t.keep = append(t.keep, keep[s])
		}
		return fmt.Sprintf("@@A%d@@", i)
	}
	amount := func(kind byte, s string) string {
		v, ok := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
		if !ok {
			return s
		}
		t.amounts = append(t.amounts, v)
		return fmt.Sprintf("0x@@%c%d@@", kind, len(t.amounts)-1)
	}
	// First pass: the addresses that appear bare, so that padded topics
	// naming them are recognised.
	var bare func(v any)
	bare = func(v any) {
		switch x := v.(type) {
		case string:
			if reAddr.MatchString(strings.ToLower(x)) {
				addr(x)
			}
		case map[string]any:
			for _, k := range sortedKeys(x) {
				bare(x[k])
			}
		case []any:
			for _, y := range x {
				bare(y)
			}
		}
	}
	bare(b.Traces)
	bare(b.Receipts[0])
	t.sender, t.bot = -1, -1
	if s, ok := b.Traces["from"].(string); ok {
		t.sender = idx[strings.ToLower(s)]
	}
	if s, ok := b.Traces["to"].(string); ok {
		t.bot = idx[strings.ToLower(s)]
	}
	var rewrite func(key string, v any) any
	rewriteLog := func(l map[string]any) {
		tp, _ := l["topics"].([]any)
		sig := ""
		if len(tp) > 0 {
			sig, _ = tp[0].(string)
		}
		for i := 1; i < len(tp); i++ {
			s, _ := tp[i].(string)
			s = strings.ToLower(s)
			if len(s) != 66 || !strings.HasPrefix(s, "0x000000000000000000000000") {
				continue
			}
			a := "0x" + s[26:]
			pos := (sig == sigTransfer && (i == 1 || i == 2)) || ((sig == sigDeposit || sig == sigWithdrawal) && i == 1) ||
				((sig == sigTransferSingle || sig == sigTransferBatch) && i >= 1 && i <= 3)
			if _, known := idx[a]; known || pos {
				tp[i] = "0x000000000000000000000000" + addr(a)
			}
		}
		if d, ok := l["data"].(string); ok && len(d) == 66 && (sig == sigTransfer && len(tp) == 3 || sig == sigDeposit || sig == sigWithdrawal) {
			l["data"] = amount(slotWord, d)
		}
		for _, k := range sortedKeys(l) {
			if k != "topics" && k != "data" {
				l[k] = rewrite(k, l[k])
			}
		}
	}
	rewrite = func(key string, v any) any {
		switch x := v.(type) {
		case string:
			switch key {
			case "transactionHash", "txHash":
				return "0x@@H@@"
			case "blockNumber":
				return "0x@@B@@"
			case "blockHash":
				return "0x@@K@@"
			case "transactionIndex":
				return "0x@@I@@"
			case "value", "effectiveGasPrice", "gasPrice":
				// Gas prices scale with the amounts, so that a
				// transaction's net balance keeps its sign.
				return amount(slotQty, x)
			}
			if reAddr.MatchString(strings.ToLower(x)) {
				return "0x" + addr(x)
			}
			return x
		case map[string]any:
			if _, ok := x["topics"]; ok {
				rewriteLog(x)
				return x
			}
			delete(x, "logsBloom")
			for _, k := range sortedKeys(x) {
				x[k] = rewrite(k, x[k])
			}
			return x
		case []any:
			for i, y := range x {
				x[i] = rewrite(key, y)
			}
			return x
		}
		return v
	}
	trace, err := json.Marshal(rewrite("", b.Traces))
	if err != nil {
		return nil, nil, err
	}
	rcpt, err := json.Marshal(rewrite("", b.Receipts[0]))
	if err != nil {
		return nil, nil, err
	}
	t.trace, t.receipt = cut(trace), cut(rcpt)
	hdr := b.Block
	delete(hdr, "logsBloom")
	return t, hdr, nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func transferSig(s string) bool {
	switch strings.ToLower(s) {
	case sigTransfer, sigTransferSingle, sigTransferBatch, sigDeposit, sigWithdrawal:
		return true
	}
	return false
}

// cut splits marshalled text at its slots.
func cut(b []byte) []piece {
	var out []piece
	last := 0
	for _, m := range reSlot.FindAllSubmatchIndex(b, -1) {
		p := piece{lit: b[last:m[0]], kind: b[m[2]]}
		if m[4] < m[5] {
			p.i, _ = strconv.Atoi(string(b[m[4]:m[5]]))
		}
		out = append(out, p)
		last = m[1]
	}
	return append(out, piece{lit: b[last:]})
}

// txState is one synthetic transaction being written.
type txState struct {
	hash   [32]byte
	index  int
	addrs  [][20]byte
	factor big.Int
}

// skewed draws from [0, n) with a heavy head: about half of the draws
// fall in the first tenth.
func (g *Generator) skewed(n int) int {
	u := g.rng.Float64()
	return int(float64(n) * u * u * u)
}

func (g *Generator) derive(kind string, n uint64) (a [20]byte) {
	// SHA-256 of seed, kind and n, in a buffer on the stack (sha256.New
	// and Sum allocate; issue 22 counts the generator's CPU).
	var b [8 + 16 + 8]byte
	binary.BigEndian.PutUint64(b[:], uint64(g.opt.Seed))
	m := 8 + copy(b[8:8+16], kind)
	binary.BigEndian.PutUint64(b[m:], n)
	sum := sha256.Sum256(b[:m+8])
	copy(a[:], sum[:])
	return a
}

// derived is derive(kind, i) for the bots and senders, which repeat:
// computed once each.
func (g *Generator) derived(memo map[uint64][20]byte, kind string, i uint64) [20]byte {
	if a, ok := memo[i]; ok {
		return a
	}
	a := g.derive(kind, i)
	memo[i] = a
	return a
}

// Block is one synthetic block.
type Block struct {
	Number    uint64
	Scenarios []string // the scenario each transaction was derived from, in order
	Bundle    []byte   // {"block", "receipts", "traces"}
}

// Block returns the next synthetic block.
func (g *Generator) Block() Block {
	blk := g.BlockAppend(g.scratch[:0])
	g.scratch = blk.Bundle
	blk.Bundle = append([]byte(nil), blk.Bundle...)
	return blk
}

// BlockAppend returns the next synthetic block, its bundle appended to
// dst[:0] (a buffer given back by a consumer done with an earlier
// bundle: no allocation once it is large enough).
func (g *Generator) BlockAppend(dst []byte) Block {
	number := g.block
	g.block++
	n := g.opt.BlockTxs
	states := make([]*template, n)
	sts := make([]txState, n)
	g.addrBuf = g.addrBuf[:0]
	for i := 0; i < n; i++ {
		w := g.rng.Intn(g.cum[len(g.cum)-1])
		k := sort.SearchInts(g.cum, w+1)
		t := g.tpls[k]
		states[i] = t
		s := &sts[i]
		s.index = i
		g.tx++
		hh := g.derive("tx", g.tx)
		copy(s.hash[:], hh[:])
		h2 := g.derive("tx2", g.tx)
		copy(s.hash[20:], h2[:12])
		s.factor.SetInt64(int64(1 + g.rng.Intn(1000)))
		if t.kept == nil {
			t.kept = make([][20]byte, len(t.addrs))
			for j, a := range t.addrs {
				if t.keep[j] {
					hex.Decode(t.kept[j][:], []byte(a[2:]))
				}
			}
		}
		// the block's addresses in one buffer: a slice of it made before
		// the buffer grows keeps the old array, which holds its values
		at := len(g.addrBuf)
		g.addrBuf = append(g.addrBuf, make([][20]byte, len(t.addrs))...)
		s.addrs = g.addrBuf[at:len(g.addrBuf):len(g.addrBuf)]
		for j := range t.addrs {
			switch {
			case t.keep[j]:
				s.addrs[j] = t.kept[j]
			case j == t.bot:
				s.addrs[j] = g.derived(g.bots, "bot", uint64(g.skewed(g.opt.Bots)))
			case j == t.sender:
				s.addrs[j] = g.derived(g.eoas, "eoa", uint64(g.skewed(g.opt.Senders)))
			default:
				s.addrs[j] = g.derive("addr", g.tx<<8|uint64(j))
			}
		}
	}
	blockHash := g.derive("block", number)
	var bh [32]byte
	copy(bh[:], blockHash[:])
	bh2 := g.derive("block2", number)
	copy(bh[20:], bh2[:12])
	hdr := make(map[string]any, len(g.header))
	for k, v := range g.header {
		hdr[k] = v
	}
	hdr["number"] = "0x" + strconv.FormatUint(number, 16)
	hdr["hash"] = "0x" + hex.EncodeToString(bh[:])
	hashes := make([]string, n)
	for i := range sts {
		hashes[i] = "0x" + hex.EncodeToString(sts[i].hash[:])
	}
	hdr["transactions"] = hashes
	hj, _ := json.Marshal(hdr)
	out := dst[:0]
	out = append(out, `{"block":`...)
	out = append(out, hj...)
	out = append(out, `,"receipts":[`...)
	for i := range sts {
		if i > 0 {
			out = append(out, ',')
		}
		out = g.render(out, states[i].receipt, states[i], &sts[i], number, bh[:])
	}
	out = append(out, `],"traces":[`...)
	for i := range sts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"txHash":"0x`...)
		out = appendHex(out, sts[i].hash[:])
		out = append(out, `","result":`...)
		out = g.render(out, states[i].trace, states[i], &sts[i], number, bh[:])
		out = append(out, '}')
	}
	out = append(out, "]}"...)
	blk := Block{Number: number, Bundle: out}
	for _, t := range states {
		blk.Scenarios = append(blk.Scenarios, t.name)
	}
	return blk
}

var max256 = new(big.Int).Lsh(big.NewInt(1), 256)

// hexPairs are the two lower-case hex digits of each byte, as one
// little-endian uint16 (the first digit in the low byte).
var hexPairs = func() (t [256]uint16) {
	const digits = "0123456789abcdef"
	for i := range t {
		t[i] = uint16(digits[i>>4]) | uint16(digits[i&15])<<8
	}
	return t
}()

// appendHexQty appends the big-endian number w as big.Int.Append(_, 16)
// writes it: lower-case digits without leading zeros, "0" for zero.
func appendHexQty(dst, w []byte) []byte {
	i := 0
	for i < len(w) && w[i] == 0 {
		i++
	}
	if i == len(w) {
		return append(dst, '0')
	}
	if w[i] < 0x10 {
		dst = append(dst, byte(hexPairs[w[i]]>>8))
		i++
	}
	return appendHex(dst, w[i:])
}

// appendHex is hex.AppendEncode writing two digits a store (about twice
// as fast; issue 22 counts the generator's CPU).
func appendHex(dst, src []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(src))[:n+2*len(src)]
	out := dst[n:]
	for i, v := range src {
		binary.LittleEndian.PutUint16(out[2*i:], hexPairs[v])
	}
	return dst
}

func (g *Generator) render(out []byte, ps []piece, t *template, s *txState, block uint64, bh []byte) []byte {
	v := &g.amount // its words reused from amount to amount
	var word [32]byte
	for _, p := range ps {
		out = append(out, p.lit...)
		switch p.kind {
		case slotAddr:
			out = appendHex(out, s.addrs[p.i][:])
		case slotQty, slotWord:
			v.Mul(t.amounts[p.i], &s.factor)
			if v.Cmp(max256) >= 0 {
				v.Set(t.amounts[p.i])
			}
			if p.kind == slotQty {
				out = appendHexQty(out, v.FillBytes(word[:]))
			} else {
				out = appendHex(out, v.FillBytes(word[:]))
			}
		case slotHash:
			out = appendHex(out, s.hash[:])
		case slotBlock:
			out = strconv.AppendUint(out, block, 16)
		case slotBlkHsh:
			out = appendHex(out, bh)
		case slotIndex:
			out = strconv.AppendUint(out, uint64(s.index), 16)
		}
	}
	return out
}
