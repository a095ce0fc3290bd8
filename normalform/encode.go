package normalform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/flowq/flowq/normalform/witness"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/holiman/uint256"
)

// EncodingVersion versions EncodeNF's format. Version 6: reasons as
// one-byte codes, signed amounts with their sign in the length byte, step
// names and notes in fewer bytes (a name's kind and number in one
// varint, a detection's path by its code, a gist note without a suffix in
// one byte; issue 22). Version 5: token kind Multi6909 and event
// EvERC6909Transfer (ERC-6909 transfers, issue 17).
const EncodingVersion = 6

// EncodeNF encodes an analysis compactly: the transaction's metadata, its
// transfers, the normal form (chains as their rule trees), the verdict,
// reasons, balances, costs and the rewrite log. Addresses and tokens are
// written once, in tables, and referred to by index; numbers are varints,
// amounts their minimal big-endian bytes. DecodeNF is its inverse:
// EncodeNF(DecodeNF(b)) = b.
//
// Layout: version byte; chain id; the wrapped-native contracts (0: the
// network's, else their number plus one and the addresses); the
// address table; the token table; metadata; transfers; the root frame;
// the root's children; the analysis; the steps (rule, frame and
// operands as numbers, notes as a reference to the chain they describe
// when they say what the kernel's gist says of it).
func EncodeNF(a *Analysis) []byte {
	e := encoders.Get().(*encoder)
	defer e.release()
	e.collect(a)
	// The body and the head are written into the pooled encoder's
	// buffers, then copied once into a value of their exact size.
	body := e.analysisBody(e.body[:0], a)
	e.body = body
	out := e.head(e.headBuf[:0], a)
	e.headBuf = out
	return append(append(make([]byte, 0, len(out)+len(body)), out...), body...)
}

// encoders are EncodeNF's encoders, with their tables and buffers.
var encoders = sync.Pool{New: func() any { return &encoder{} }}

// release empties e's tables and gives it back to the pool (a buffer
// grown past 64 KB by one large transaction is dropped).
func (e *encoder) release() {
	e.addrs.reset()
	e.toks.reset()
	clear(e.chains) // nothing of the analysis stays reachable from the pool
	e.chains, e.byID = e.chains[:0], nil
	if cap(e.chains) > 4096 {
		e.chains = nil
	}
	if e.tix = e.tix[:0]; cap(e.tix) > 4096 {
		e.tix = nil
	}
	for _, b := range []*[]byte{&e.body, &e.headBuf, &e.note, &e.gist} {
		if cap(*b) > 64<<10 {
			*b = nil
		}
	}
	encoders.Put(e)
}

func (t *table[K]) reset() {
	if cap(t.keys) > 4096 {
		t.keys = nil
	}
	t.keys, t.idx = t.keys[:0], nil
}

// head writes the encoding's head: version, chain, tables, balances.
func (e *encoder) head(out []byte, a *Analysis) []byte {
	out = append(out, EncodingVersion)
	out = binary.AppendUvarint(out, a.cfg.ChainID)
	wn, def := a.cfg.encodedWrapped()
	if def {
		out = append(out, 0)
	} else {
		out = binary.AppendUvarint(out, uint64(len(wn))+1)
		for _, w := range wn {
			out = append(out, w[:]...)
		}
	}
	out = binary.AppendUvarint(out, uint64(len(e.addrs.keys)))
	for _, ad := range e.addrs.keys {
		out = append(out, ad[:]...)
	}
	out = binary.AppendUvarint(out, uint64(len(e.toks.keys)))
	for _, t := range e.toks.keys {
		out = append(out, byte(t.Kind))
		out = binary.AppendUvarint(out, e.ai(t.Addr))
		if t.HasID() {
			out = appendU256(out, &t.ID)
		}
	}
	// the balances, right after the tables (Head.BalancesAt): a reader
	// that holds them elsewhere finds them without decoding the body
	out = e.delta(out, a.Gross)
	out = appendBool(out, a.Net != nil)
	return e.delta(out, a.Net)
}

// encoder holds the address and token tables.
type encoder struct {
	addrs table[Address]
	toks  table[Token]
	// note and gist: the steps' scratch (a step's note, a chain's gist);
	// body and headBuf: EncodeNF's two parts before they are joined
	note, gist, body, headBuf []byte
	// chains: the normal form's inner chains as collect walks them (the
	// order chainsByID visits them in); byID indexes them when there are
	// many
	chains []*Chain
	byID   map[int32]*Chain
	// tix: each transfer's from, to, sender and token indexes
	tix [][4]uint32
}

// chain is chainsByID(a.NF)[id] from the chains collect gathered: the
// last one of that id, as the map keeps it; searched linearly while
// there are few.
func (e *encoder) chainByID(id int32) *Chain {
	if len(e.chains) <= 32 {
		for i := len(e.chains) - 1; i >= 0; i-- {
			if e.chains[i].ID == id {
				return e.chains[i]
			}
		}
		return nil
	}
	if e.byID == nil {
		e.byID = make(map[int32]*Chain, len(e.chains))
		for _, c := range e.chains {
			e.byID[c.ID] = c
		}
	}
	return e.byID[id]
}

// table is a list of distinct keys and their indexes. A transaction has
// few addresses and tokens: a table is searched linearly until it grows
// past smallTable entries, then through a map.
type table[K comparable] struct {
	keys []K
	idx  map[K]int
}

const smallTable = 16

func (t *table[K]) index(k K) (int, bool) {
	if t.idx != nil {
		i, ok := t.idx[k]
		return i, ok
	}
	for i := range t.keys {
		if t.keys[i] == k {
			return i, true
		}
	}
	return 0, false
}

// add adds k when it is new; it returns k's index.
func (t *table[K]) add(k K) int {
	if i, ok := t.index(k); ok {
		return i
	}
	t.keys = append(t.keys, k)
	if t.idx != nil {
		t.idx[k] = len(t.keys) - 1
	} else if len(t.keys) > smallTable {
		t.idx = make(map[K]int, 2*len(t.keys))
		for i, x := range t.keys {
			t.idx[x] = i
		}
	}
	return len(t.keys) - 1
}

// ai and ti are the table indexes of an address and a token collected.
func (e *encoder) ai(a Address) uint64 { i, _ := e.addrs.index(a); return uint64(i) }
func (e *encoder) ti(t Token) uint64   { i, _ := e.toks.index(t); return uint64(i) }

func (e *encoder) addr(a Address) { e.addrs.add(a) }

func (e *encoder) tok(t Token) {
	e.addr(t.Addr)
	e.toks.add(t)
}

func (e *encoder) collect(a *Analysis) {
	m := &a.Tx.Meta
	for _, ad := range []Address{m.From, m.To, m.Miner, a.Recipient, a.Sender} {
		e.addr(ad)
	}
	// a transfer's table indexes, kept for the body (which would look
	// them up again)
	e.tix = e.tix[:0]
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		f, to, snd := e.addrs.add(t.From), e.addrs.add(t.To), e.addrs.add(t.Sender)
		e.addr(t.Token.Addr)
		e.tix = append(e.tix, [4]uint32{uint32(f), uint32(to), uint32(snd), uint32(e.toks.add(t.Token))})
	}
	if a.NF != nil {
		e.addr(a.NF.Frame.From)
		e.addr(a.NF.Frame.To)
		e.addr(a.NF.Frame.Sender)
		var walk func(c *Chain)
		walk = func(c *Chain) {
			if c.Leaf != nil {
				return
			}
			e.addr(c.FrameSender)
			e.chains = append(e.chains, c) // chainsByID's order
			walk(c.Left)
			walk(c.Right)
		}
		for _, n := range a.NF.Children {
			if n.Chain != nil {
				walk(n.Chain)
			}
		}
	}
	for _, d := range []Delta{a.Gross, a.Net, a.Explained, a.Unexplained} {
		for _, x := range d {
			e.addr(x.Addr)
			e.tok(x.Token)
		}
	}
}

func appendU256(b []byte, v *uint256.Int) []byte {
	n := v.ByteLen()
	w := v.Bytes32() // on the stack: Int.Bytes would allocate a copy
	b = append(b, byte(n))
	return append(b, w[32-n:]...)
}

// appendSigned writes a signed amount: a byte holding the magnitude's
// length (0..32) and, in its high bit, the sign; then the magnitude's
// minimal big-endian bytes.
func appendSigned(b []byte, neg bool, v *uint256.Int) []byte {
	n := v.ByteLen()
	w := v.Bytes32()
	l := byte(n)
	if neg {
		l |= 0x80
	}
	return append(append(b, l), w[32-n:]...)
}

// reasonTable gives the reasons their one-byte codes (index; 0: the
// reason written out); append only.
var reasonTable = [...]Reason{"", ReasonNoCycles, ReasonLeftovers, ReasonFinalNeg, ReasonFinalMixed, ReasonCostsUnknown,
	ReasonInnerCycle, ReasonBalanceMixed, ReasonNegProfit, ReasonPromoted, ReasonSelfCall, ReasonBuilder, ReasonPayout,
	ReasonUnexplained, ReasonUnwitnessed, ReasonReceiptsOnly, ReasonV4Netted}

func reasonCodeOf(r Reason) byte {
	for i := 1; i < len(reasonTable); i++ {
		if reasonTable[i] == r {
			return byte(i)
		}
	}
	return 0
}

// The costs' flags.
const (
	costKnown = 1 << iota
	costSum
	costGas
)

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func (e *encoder) analysisBody(b []byte, a *Analysis) []byte {
	m := &a.Tx.Meta
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	ai := func(ad Address) { u(e.ai(ad)) }
	// metadata
	var flags uint64
	for i, f := range []bool{m.HasHash, m.HasBlock, m.HasIndex, m.HasFrom, m.HasTo, m.HasReceipt, m.HasHeader, m.HasBaseFee} {
		if f {
			flags |= 1 << i
		}
	}
	u(flags)
	b = append(b, m.Hash[:]...)
	u(m.Block)
	u(uint64(m.Index))
	ai(m.From)
	ai(m.To)
	b = append(b, byte(m.Status), m.Type)
	u(m.GasUsed)
	b = appendU256(b, &m.EffectiveGasPrice)
	b = appendU256(b, &m.BaseFee)
	ai(m.Miner)
	u(m.Timestamp)
	b = append(append(b, a.Tx.Shape...), 0)
	s := a.Tx.Stats
	for _, v := range []int{s.Frames, s.RevertedFrames, s.Logs, s.TransferLogs, s.IgnoredLogs, s.Degenerate} {
		u(uint64(v))
	}
	// transfers
	u(uint64(len(a.Tx.Transfers)))
	for i := range a.Tx.Transfers {
		t, x := &a.Tx.Transfers[i], &e.tix[i]
		u(uint64(x[0]))
		u(uint64(x[1]))
		b = appendU256(b, &t.Amount)
		u(uint64(x[3]))
		u(uint64(x[2]))
		b = append(b, byte(t.Flags), byte(t.Event))
		u(uint64(t.LogIndex + 1))
		u(uint64(t.Frame))
	}
	// normal form
	b = appendBool(b, a.NF != nil)
	if a.NF != nil {
		f := a.NF.Frame
		b = append(b, byte(f.Type))
		ai(f.From)
		ai(f.To)
		u(uint64(f.Index))
		u(uint64(f.Depth))
		ai(f.Sender)
		u(uint64(len(a.NF.Children)))
		for _, n := range a.NF.Children {
			b = e.node(b, n)
		}
	}
	// analysis
	ai(a.Recipient)
	ai(a.Sender)
	u(uint64(a.Passes))
	b = append(b, byte(a.Verdict), byte(a.Tier))
	u(uint64(len(a.Reasons)))
	for _, r := range a.Reasons { // its code, or 0 and the text (NUL-terminated)
		c := reasonCodeOf(r)
		b = append(b, c)
		if c == 0 {
			b = append(append(b, r...), 0)
		}
	}
	for _, ts := range [][]*Transfer{a.Leftover, a.Builder} {
		u(uint64(len(ts)))
		for _, t := range ts {
			u(uint64(t.Pos))
		}
	}
	// costs: a flags byte (1 known, 2 the total is the sum of the
	// others and left out, 4 the gas used is the receipt's and left out)
	c := &a.Costs
	var cf byte
	if c.Known {
		cf |= costKnown
	}
	var sum uint256.Int
	if _, o1 := sum.AddOverflow(&c.BaseFee, &c.Priority); !o1 {
		if _, o2 := sum.AddOverflow(&sum, &c.Builder); !o2 && sum == c.Total {
			cf |= costSum
		}
	}
	if c.GasUsed == m.GasUsed {
		cf |= costGas
	}
	b = append(b, cf)
	if cf&costGas == 0 {
		u(c.GasUsed)
	}
	for _, v := range []*uint256.Int{&c.BaseFee, &c.Priority, &c.Builder} {
		b = appendU256(b, v)
	}
	if cf&costSum == 0 {
		b = appendU256(b, &c.Total)
	}
	b = e.detections(b, a)
	// steps
	return e.steps(b, a)
}

// detections: per detection its path, origin, token, the ids of the
// chains it reads, the rotation's start (+1), its gain and its witness
// (pieces of positions); then payouts, internal transfers, the explained
// and unexplained balances and the count of unwitnessed candidates.
func (e *encoder) detections(b []byte, a *Analysis) []byte {
	u := func(v uint64) { b = binary.AppendUvarint(b, v) }
	u(uint64(len(a.Detections)))
	for i := range a.Detections {
		det := &a.Detections[i]
		b = append(b, byte(det.Path))
		u(e.ai(det.Origin))
		u(e.ti(det.Token))
		u(uint64(len(det.Chains)))
		for _, c := range det.Chains {
			u(uint64(c.ID))
		}
		u(uint64(len(det.Legs)))
		for _, t := range det.Legs {
			u(uint64(t.Pos))
		}
		u(uint64(det.Start + 1))
		b = appendSigned(b, det.Gain.Neg, &det.Gain.Abs)
		w := det.Witness
		u(e.ti(w.Token))
		u(uint64(len(w.Pieces)))
		for _, p := range w.Pieces {
			u(uint64(len(p)))
			for _, pos := range p {
				u(uint64(pos))
			}
		}
		b = appendSigned(b, w.Gain.Neg, &w.Gain.Abs)
	}
	for _, ts := range [][]*Transfer{a.Payouts, a.Internal} {
		u(uint64(len(ts)))
		for _, t := range ts {
			u(uint64(t.Pos))
		}
	}
	b = e.delta(b, a.Explained)
	b = e.delta(b, a.Unexplained)
	u(uint64(a.unwitnessed))
	return b
}

func (d *decoder) detections(a *Analysis) {
	nt := len(d.tx.Transfers)
	byID := chainsByID(a.NF)
	for n := d.small(nt + 1); n > 0 && d.err == nil; n-- {
		det := Detection{Path: Path(d.byte1()), Origin: d.addr()}
		if det.Path == PathNone || det.Path > PathInner {
			d.fail(errors.New("detection path out of range"))
			return
		}
		ti := d.small(len(d.toks))
		if ti >= len(d.toks) {
			d.fail(errors.New("token index out of range"))
			return
		}
		det.Token = d.toks[ti]
		for k := d.small(nt + 1); k > 0 && d.err == nil; k-- {
			c, ok := byID[int32(d.u())]
			if !ok {
				d.fail(errors.New("a detection names a chain the normal form lacks"))
				return
			}
			det.Chains = append(det.Chains, c)
		}
		for k := d.small(nt + 1); k > 0 && d.err == nil; k-- {
			det.Legs = append(det.Legs, d.transfer())
		}
		if len(det.Chains) == 0 && len(det.Legs) == 0 {
			d.fail(errors.New("a detection reads no chain"))
			return
		}
		det.Start = int32(d.small(nt+1)) - 1
		det.Gain.Neg, det.Gain.Abs = d.signed()
		w := &witness.Witness[Token]{V: det.Origin}
		if wi := d.small(len(d.toks)); wi < len(d.toks) {
			w.Token = d.toks[wi]
		} else {
			d.fail(errors.New("token index out of range"))
			return
		}
		for k := d.small(nt + 1); k > 0 && d.err == nil; k-- {
			p := make([]int32, 0, 4)
			for m := d.small(nt + 1); m > 0 && d.err == nil; m-- {
				pos := d.small(nt)
				if pos >= nt {
					d.fail(errors.New("witness position out of range"))
					return
				}
				p = append(p, int32(pos))
			}
			w.Pieces = append(w.Pieces, p)
		}
		w.Gain.Neg, w.Gain.Abs = d.signed()
		det.Witness = w
		a.Detections = append(a.Detections, det)
	}
	for _, ts := range []*[]*Transfer{&a.Payouts, &a.Internal} {
		for n := d.small(nt); n > 0 && d.err == nil; n-- {
			*ts = append(*ts, d.transfer())
		}
	}
	a.Explained = d.delta()
	a.Unexplained = d.delta()
	a.unwitnessed = d.small(nt + 1)
}

func (e *encoder) delta(b []byte, d Delta) []byte {
	b = binary.AppendUvarint(b, uint64(len(d)))
	for _, x := range d {
		b = binary.AppendUvarint(b, e.ai(x.Addr))
		b = binary.AppendUvarint(b, e.ti(x.Token))
		b = appendSigned(b, x.Amount.Neg, &x.Amount.Abs)
	}
	return b
}

// node: 0 leaf (position), 1 chain.
func (e *encoder) node(b []byte, n *Node) []byte {
	if n.Leaf != nil {
		b = append(b, 0)
		return binary.AppendUvarint(b, uint64(n.Leaf.Pos))
	}
	return e.chain(append(b, 1), n.Chain)
}

// chain: 0 leaf chain (position), 1 inner (id, label, rule, flags, frame,
// frame sender, left, right).
func (e *encoder) chain(b []byte, c *Chain) []byte {
	if c.Leaf != nil {
		b = append(b, 0)
		return binary.AppendUvarint(b, uint64(c.Leaf.Pos))
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(c.ID))
	var f byte
	for i, v := range []bool{c.Merged, c.Promoted, c.Downgraded} {
		if v {
			f |= 1 << i
		}
	}
	b = append(b, byte(c.Label), storedRule(c.Rule), f)
	b = binary.AppendUvarint(b, uint64(c.Frame))
	b = binary.AppendUvarint(b, e.ai(c.FrameSender))
	b = e.chain(b, c.Left)
	return e.chain(b, c.Right)
}

// --- stored values of rules -------------------------------------------------

// ruleStored is the byte a rule is stored as, in a chain (the rule that
// built it) and in a step. The values are fixed here, not taken from the
// Rule constants' order: a rule added anywhere in the table or the
// constants takes a new byte and changes no stored one. A value is never
// reused or renumbered (TestRuleStoredValues holds them).
var ruleStored = map[Rule]byte{
	NoRule: 0,
	R1:     1, R2: 2, R3: 3, R4: 4, R5: 5, R6: 6, R7: 7, R8: 8,
	R9: 9, R10: 10, R11: 11, R12: 12, R13: 13, R14: 14, R15: 15, R16: 16,
	Lift: 17, Connect: 18, Promote: 19, Specular: 20, Complementary: 21, Detect: 22,
}

// ruleArray and ruleOfByte are ruleStored as arrays, both ways (ok false
// for a byte no rule is stored as).
var (
	ruleArray  [Detect + 1]byte
	ruleOfByte [256]struct {
		r  Rule
		ok bool
	}
)

func init() {
	for r, b := range ruleStored {
		ruleArray[r] = b
		ruleOfByte[b].r, ruleOfByte[b].ok = r, true
	}
}

// storedRule is the byte r is stored as.
func storedRule(r Rule) byte {
	if int(r) < len(ruleArray) {
		return ruleArray[r]
	}
	return 0xff // no rule is stored as it: the decoder rejects it
}

// rule reads a stored rule byte.
func (d *decoder) rule() Rule {
	b := d.byte1()
	if d.err != nil {
		return NoRule
	}
	x := ruleOfByte[b]
	if !x.ok {
		d.fail(fmt.Errorf("unknown rule byte %d", b))
		return NoRule
	}
	return x.r
}

// --- decoding ---------------------------------------------------------------

var errShort = errors.New("truncated")

type decoder struct {
	b     []byte
	i     int
	err   error
	addrs []Address
	toks  []Token
	tx    *Tx
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("normal form encoding, byte %d: %w", d.i, err)
	}
}

func (d *decoder) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.i += n
	return v
}

// small reads a count or index bounded by limit.
func (d *decoder) small(limit int) int {
	v := d.u()
	if v > uint64(limit) {
		d.fail(fmt.Errorf("value %d over its bound %d", v, limit))
		return 0
	}
	return int(v)
}

func (d *decoder) byte1() byte {
	if d.err != nil || d.i >= len(d.b) {
		d.fail(errShort)
		return 0
	}
	d.i++
	return d.b[d.i-1]
}

func (d *decoder) raw(n int) []byte {
	if d.err != nil || d.i+n > len(d.b) {
		d.fail(errShort)
		return make([]byte, n)
	}
	d.i += n
	return d.b[d.i-n : d.i]
}

func (d *decoder) str() string {
	for j := d.i; j < len(d.b); j++ {
		if d.b[j] == 0 {
			s := string(d.b[d.i:j])
			d.i = j + 1
			return s
		}
	}
	d.fail(errShort)
	return ""
}

func (d *decoder) u256() uint256.Int {
	n := int(d.byte1())
	if n > 32 {
		d.fail(errors.New("amount longer than 32 bytes"))
		return uint256.Int{}
	}
	var v uint256.Int
	v.SetBytes(d.raw(n))
	return v
}

// signed reads appendSigned's bytes.
func (d *decoder) signed() (bool, uint256.Int) {
	l := d.byte1()
	n := int(l & 0x7f)
	if n > 32 {
		d.fail(errors.New("amount longer than 32 bytes"))
		return false, uint256.Int{}
	}
	var v uint256.Int
	v.SetBytes(d.raw(n))
	return l&0x80 != 0, v
}

func (d *decoder) addr() Address {
	i := d.small(len(d.addrs))
	if i >= len(d.addrs) {
		d.fail(errors.New("address index out of range"))
		return Address{}
	}
	return d.addrs[i]
}

func (d *decoder) bool1() bool { return d.byte1() == 1 }

// DecodeNF decodes EncodeNF's bytes. The result renders, hashes and
// re-encodes like the analysis it came from.
func DecodeNF(b []byte) (*Analysis, error) {
	d := &decoder{b: b}
	chainID, wrapped, err := d.start()
	if err != nil {
		return nil, err
	}
	cfg := decodeConfig(chainID, wrapped)
	tx := &Tx{}
	d.tx = tx
	a := &Analysis{Tx: tx, cfg: cfg}
	a.Gross = d.delta()
	hasNet := d.bool1()
	a.Net = d.delta()
	if !hasNet {
		a.Net = nil
	}
	m := &tx.Meta
	flags := d.u()
	for i, p := range []*bool{&m.HasHash, &m.HasBlock, &m.HasIndex, &m.HasFrom, &m.HasTo, &m.HasReceipt, &m.HasHeader, &m.HasBaseFee} {
		*p = flags&(1<<i) != 0
	}
	copy(m.Hash[:], d.raw(32))
	m.Block = d.u()
	m.Index = int(d.u())
	m.From, m.To = d.addr(), d.addr()
	m.Status, m.Type = Status(d.byte1()), d.byte1()
	m.GasUsed = d.u()
	m.EffectiveGasPrice, m.BaseFee = d.u256(), d.u256()
	m.Miner = d.addr()
	m.Timestamp = d.u()
	tx.Shape = d.str()
	s := &tx.Stats
	for _, p := range []*int{&s.Frames, &s.RevertedFrames, &s.Logs, &s.TransferLogs, &s.IgnoredLogs, &s.Degenerate} {
		*p = int(d.u())
	}
	nt := d.small(len(b))
	tx.Transfers = make([]Transfer, nt)
	for i := 0; i < nt && d.err == nil; i++ {
		t := &tx.Transfers[i]
		t.From, t.To = d.addr(), d.addr()
		t.Amount = d.u256()
		ti := d.small(len(d.toks))
		if ti < len(d.toks) {
			t.Token = d.toks[ti]
		} else {
			d.fail(errors.New("token index out of range"))
		}
		t.Sender = d.addr()
		t.Flags, t.Event = Flags(d.byte1()), Event(d.byte1())
		t.LogIndex = int32(d.u()) - 1
		t.Frame = int32(d.u())
		t.Pos = int32(i)
	}
	if d.bool1() {
		f := &Frame{Type: CallType(d.byte1())}
		f.From, f.To = d.addr(), d.addr()
		f.Index, f.Depth = int32(d.u()), int32(d.u())
		f.Sender = d.addr()
		a.NF = &Node{Frame: f}
		for n := d.small(nt); n > 0 && d.err == nil; n-- {
			a.NF.Children = append(a.NF.Children, d.node())
		}
	}
	a.Recipient, a.Sender = d.addr(), d.addr()
	a.Passes = int(d.u())
	a.Verdict, a.Tier = Verdict(d.byte1()), Tier(d.byte1())
	if a.Verdict > VerdictArbitrage || a.Tier > TierUncertain {
		d.fail(errors.New("verdict or tier out of range"))
	}
	for n := d.small(64); n > 0; n-- {
		c := d.byte1()
		switch {
		case c == 0:
			r := d.str()
			if reasonCodeOf(Reason(r)) != 0 {
				d.fail(errors.New("a reason written out that has a code"))
			}
			a.Reasons = append(a.Reasons, Reason(r))
		case int(c) < len(reasonTable):
			a.Reasons = append(a.Reasons, reasonTable[c])
		default:
			d.fail(fmt.Errorf("unknown reason code %d", c))
		}
	}
	for _, ts := range []*[]*Transfer{&a.Leftover, &a.Builder} {
		for n := d.small(nt); n > 0 && d.err == nil; n-- {
			*ts = append(*ts, d.transfer())
		}
	}
	c := &a.Costs
	cf := d.byte1()
	if cf >= costGas<<1 {
		d.fail(fmt.Errorf("costs flags %#x", cf))
	}
	c.Known = cf&costKnown != 0
	if cf&costGas != 0 {
		c.GasUsed = m.GasUsed
	} else {
		c.GasUsed = d.u()
	}
	c.BaseFee, c.Priority, c.Builder = d.u256(), d.u256(), d.u256()
	if cf&costSum != 0 {
		if _, o := c.Total.AddOverflow(&c.BaseFee, &c.Priority); o {
			d.fail(errors.New("costs: the sum left out overflows"))
		} else if _, o := c.Total.AddOverflow(&c.Total, &c.Builder); o {
			d.fail(errors.New("costs: the sum left out overflows"))
		}
	} else {
		c.Total = d.u256()
	}
	d.detections(a)
	d.steps(a)
	if d.err == nil && d.i != len(b) {
		d.fail(fmt.Errorf("%d bytes after the end", len(b)-d.i))
	}
	if d.err != nil {
		return nil, d.err
	}
	if a.NF != nil {
		for _, n := range a.NF.Children {
			if n.Chain != nil && n.Chain.Closed() {
				a.Cycles = append(a.Cycles, n.Chain)
			}
		}
	}
	return a, nil
}

func (d *decoder) transfer() *Transfer {
	p := d.small(len(d.tx.Transfers))
	if p >= len(d.tx.Transfers) {
		d.fail(errors.New("transfer position out of range"))
		return &Transfer{}
	}
	return &d.tx.Transfers[p]
}

func (d *decoder) delta() Delta {
	var out Delta
	for n := d.small(len(d.b)); n > 0 && d.err == nil; n-- {
		e := DeltaEntry{Addr: d.addr()}
		ti := d.small(len(d.toks))
		if ti < len(d.toks) {
			e.Token = d.toks[ti]
		}
		e.Amount.Neg, e.Amount.Abs = d.signed()
		out = append(out, e)
	}
	return out
}

func (d *decoder) node() *Node {
	if d.byte1() == 0 {
		return &Node{Leaf: d.transfer()}
	}
	return &Node{Chain: d.chain(0)}
}

func (d *decoder) chain(depth int) *Chain {
	if depth > 100000 {
		d.fail(errors.New("chain nested too deep"))
		return leafChain(&Transfer{})
	}
	if d.byte1() == 0 {
		return leafChain(d.transfer())
	}
	id := int32(d.u())
	label, rule, f := Label(d.byte1()), d.rule(), d.byte1()
	frame := int32(d.u())
	fs := d.addr()
	left := d.chain(depth + 1)
	right := d.chain(depth + 1)
	if d.err != nil {
		return leafChain(&Transfer{})
	}
	c, err := join(left, right, rule, label, f&1 != 0)
	if err != nil {
		d.fail(err)
		return leafChain(&Transfer{})
	}
	c.ID, c.Frame, c.FrameSender = id, frame, fs
	c.Promoted, c.Downgraded = f&2 != 0, f&4 != 0
	return c
}

// --- the step log -------------------------------------------------------------
//
// A step is its rule byte, its frame, its operands, its result and its
// note. The kernel writes operands and results as names ("#3" a transfer,
// "C5" a chain, "frame 12" a lifted frame, a lift's result the names of
// what it lifted, space-separated, a detection's result the path it was
// found by) and notes as the gist of the chain it built or relabelled
// (label, endpoints, tokens), sometimes with a suffix. The encoding
// predicts those texts and keeps a literal only when the prediction
// fails, so any text round-trips:
//
//	name: uvarint kind | n<<3: kind 0 literal (n bytes follow), 1 "#n",
//	      2 "Cn", 3 "frame n", 4 a list of n names (each of kind 1 or 2),
//	      5 the path name n (pathNames)
//	note: uvarint 0 literal, 1 empty, 2 the gist of the result's chain
//	      with a label byte, then a literal suffix; 3+l the gist under
//	      label l without a suffix
//
// The gist is rendered with the configuration DecodeNF builds (chain id
// and wrapped-native contracts), so encoder and decoder agree on it.

const (
	nameLit = iota
	nameTransfer
	nameChain
	nameFrame
	nameList
	namePath
)

const (
	noteLit = iota
	noteEmpty
	noteGist
	noteGistOnly // + label
)

// number parses prefix followed by a decimal written the way %d writes it.
func number(s, prefix string) (uint64, bool) {
	if !strings.HasPrefix(s, prefix) {
		return 0, false
	}
	return decimal31(s[len(prefix):])
}

// decimal31 parses a decimal under 2^31 written the way %d writes it
// (digits only, no leading zero but in "0"): strconv.ParseUint(s, 10,
// 31) whose FormatUint gives s back, without building that string.
func decimal31(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxInt32 {
		return 0, false
	}
	return n, true
}

func appendLit(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendNameTag(b []byte, tag byte, n uint64) []byte {
	return binary.AppendUvarint(b, n<<3|uint64(tag))
}

func appendName(b []byte, s string) []byte {
	if n, ok := number(s, "#"); ok {
		return appendNameTag(b, nameTransfer, n)
	}
	if n, ok := number(s, "C"); ok {
		return appendNameTag(b, nameChain, n)
	}
	if n, ok := number(s, "frame "); ok {
		return appendNameTag(b, nameFrame, n)
	}
	for i := 1; i < len(pathNames); i++ {
		if s == pathNames[i] {
			return appendNameTag(b, namePath, uint64(i))
		}
	}
	parts := 0 // strings.Split(s, " ")'s count, without the slice
	if s != "" {
		parts = strings.Count(s, " ") + 1
	}
	list := appendNameTag(b, nameList, uint64(parts))
	for rest, more := s, s != ""; more; {
		var p string
		p, rest, more = strings.Cut(rest, " ")
		if n, ok := number(p, "#"); ok {
			list = appendNameTag(list, nameTransfer, n)
		} else if n, ok := number(p, "C"); ok {
			list = appendNameTag(list, nameChain, n)
		} else {
			return append(appendNameTag(b, nameLit, uint64(len(s))), s...)
		}
	}
	return list
}

// stepConfigs caches the configurations DecodeNF would build, by chain id
// and wrapped-native contracts, for the encoder's predictions.
var stepConfigs sync.Map

func decodeConfig(chainID uint64, wrapped []Address) *Config {
	net := Networks[chainID]
	if net == nil {
		net = &Network{ID: chainID, Name: fmt.Sprint(chainID), NativeSymbol: "ETH"}
	}
	return NewConfig(net, wrapped, nil)
}

// lastWrapped remembers encodedWrapped's last answer: the encoding
// asks it of the analysis's configuration twice a transaction, and
// WrappedNative sorts a map into a new slice each time. It holds its
// configuration, so the pointer cannot be reused by another while it
// is remembered; a configuration's wrapped-native set is fixed when it
// is built (NewConfig; WithShortener's copy shares it).
var lastWrapped atomic.Pointer[wrappedOf]

type wrappedOf struct {
	cfg     *Config
	chainID uint64
	wn      []Address
	def     bool
}

// encodedWrapped is c.WrappedNative() (not to be modified) and whether
// it is the network's default set (defaultWrapped).
func (c *Config) encodedWrapped() ([]Address, bool) {
	if p := lastWrapped.Load(); p != nil && p.cfg == c && p.chainID == c.ChainID {
		return p.wn, p.def
	}
	wn := c.WrappedNative()
	p := &wrappedOf{cfg: c, chainID: c.ChainID, wn: wn, def: defaultWrapped(c.ChainID, wn)}
	lastWrapped.Store(p)
	return p.wn, p.def
}

// lastPredicted is predictConfig's last answer, read before the map: an
// ingest encodes every transaction under one configuration.
var lastPredicted atomic.Pointer[predicted]

type predicted struct {
	chainID uint64
	wrapped []Address
	cfg     *Config
}

func predictConfig(chainID uint64, wrapped []Address) *Config {
	if p := lastPredicted.Load(); p != nil && p.chainID == chainID && slices.Equal(p.wrapped, wrapped) {
		return p.cfg
	}
	c := predictConfigMap(chainID, wrapped)
	lastPredicted.Store(&predicted{chainID, slices.Clone(wrapped), c})
	return c
}

func predictConfigMap(chainID uint64, wrapped []Address) *Config {
	k := make([]byte, 0, 8+20*len(wrapped))
	k = binary.BigEndian.AppendUint64(k, chainID)
	for _, w := range wrapped {
		k = append(k, w[:]...)
	}
	if c, ok := stepConfigs.Load(string(k)); ok {
		return c.(*Config)
	}
	c := decodeConfig(chainID, wrapped)
	stepConfigs.Store(string(k), c)
	return c
}

// stepGist is what the kernel's gist says of a chain under a label.
func stepGist(cfg *Config, c *Chain, l Label) string { return gistText(cfg, c, l) }

// chainsByID indexes the inner chains of a normal form.
func chainsByID(nf *Node) map[int32]*Chain {
	out := map[int32]*Chain{}
	if nf == nil {
		return out
	}
	var walk func(c *Chain)
	walk = func(c *Chain) {
		if c.Leaf != nil {
			return
		}
		out[c.ID] = c
		walk(c.Left)
		walk(c.Right)
	}
	for _, n := range nf.Children {
		if n.Chain != nil {
			walk(n.Chain)
		}
	}
	return out
}

func (e *encoder) steps(b []byte, a *Analysis) []byte {
	b = binary.AppendUvarint(b, uint64(len(a.Steps)))
	var cfg *Config
	for _, st := range a.Steps {
		b = append(b, storedRule(st.Rule))
		b = binary.AppendUvarint(b, uint64(st.Frame))
		b = binary.AppendUvarint(b, uint64(len(st.Operands)))
		for _, op := range st.Operands {
			b = appendName(b, op)
		}
		b = appendName(b, st.Result)
		// The note and the gists it is compared with are rendered into
		// the encoder's two buffers, not into strings.
		e.note = st.appendNoteText(e.note[:0])
		note := e.note
		if len(note) == 0 {
			b = binary.AppendUvarint(b, noteEmpty)
			continue
		}
		if id, ok := number(st.Result, "C"); ok {
			if cfg == nil {
				wn, _ := a.cfg.encodedWrapped()
				cfg = predictConfig(a.cfg.ChainID, wn)
			}
			if c := e.chainByID(int32(id)); c != nil {
				if l, n, ok := e.noteGist(cfg, c, note); ok {
					if suffix := note[n:]; len(suffix) != 0 {
						b = append(binary.AppendUvarint(b, noteGist), byte(l))
						b = append(binary.AppendUvarint(b, uint64(len(suffix))), suffix...)
					} else {
						b = binary.AppendUvarint(b, noteGistOnly+uint64(l))
					}
					continue
				}
			}
		}
		b = append(binary.AppendUvarint(binary.AppendUvarint(b, noteLit), uint64(len(note))), note...)
	}
	return b
}

// gistLabel finds the label under which the chain's gist begins the note:
// the chain's own label first, then every label in order.
func gistLabel(cfg *Config, c *Chain, note string) (Label, bool) {
	if int(c.Label) < len(labelNames) && strings.HasPrefix(note, stepGist(cfg, c, c.Label)) {
		return c.Label, true
	}
	for l := Label(0); int(l) < len(labelNames); l++ {
		if strings.HasPrefix(note, stepGist(cfg, c, l)) {
			return l, true
		}
	}
	return 0, false
}

// noteGist is gistLabel on a note rendered into a buffer, the gists
// rendered into the encoder's; n is the gist's length.
func (e *encoder) noteGist(cfg *Config, c *Chain, note []byte) (l Label, n int, ok bool) {
	if int(c.Label) < len(labelNames) {
		if e.gist = appendGist(e.gist[:0], cfg, c, c.Label); bytes.HasPrefix(note, e.gist) {
			return c.Label, len(e.gist), true
		}
	}
	for l := Label(0); int(l) < len(labelNames); l++ {
		if e.gist = appendGist(e.gist[:0], cfg, c, l); bytes.HasPrefix(note, e.gist) {
			return l, len(e.gist), true
		}
	}
	return 0, 0, false
}

func (d *decoder) lit() string {
	n := d.small(len(d.b) - d.i)
	return string(d.raw(n))
}

func (d *decoder) name(inList bool) string {
	x := d.u()
	tag, n := x&7, x>>3
	if n > math.MaxInt32 {
		d.fail(fmt.Errorf("name number %d over its bound", n))
		return ""
	}
	switch {
	case d.err != nil:
	case tag == nameTransfer:
		return "#" + strconv.FormatUint(n, 10)
	case tag == nameChain:
		return "C" + strconv.FormatUint(n, 10)
	case inList:
		d.fail(errors.New("bad name in a list"))
	case tag == nameLit:
		if n > uint64(len(d.b)-d.i) {
			d.fail(errShort)
			return ""
		}
		return string(d.raw(int(n)))
	case tag == nameFrame:
		return "frame " + strconv.FormatUint(n, 10)
	case tag == namePath:
		if n == 0 || n >= uint64(len(pathNames)) {
			d.fail(fmt.Errorf("unknown path name %d", n))
			return ""
		}
		return pathNames[n]
	case tag == nameList:
		if n > uint64(len(d.b)-d.i) {
			d.fail(errShort)
			return ""
		}
		parts := make([]string, 0, n)
		for ; n > 0 && d.err == nil; n-- {
			parts = append(parts, d.name(true))
		}
		return strings.Join(parts, " ")
	default:
		d.fail(fmt.Errorf("bad name tag %d", tag))
	}
	return ""
}

func (d *decoder) steps(a *Analysis) {
	var chains map[int32]*Chain
	for n := d.small(len(d.b)); n > 0 && d.err == nil; n-- {
		st := Step{Rule: d.rule(), Frame: int32(d.u())}
		for k := d.small(len(d.b)); k > 0 && d.err == nil; k-- {
			st.Operands = append(st.Operands, d.name(false))
		}
		st.Result = d.name(false)
		switch tag := d.u(); {
		case d.err != nil:
		case tag == noteEmpty:
		case tag == noteLit:
			st.Note = d.lit()
		case tag == noteGist, tag >= noteGistOnly && tag < noteGistOnly+uint64(len(labelNames)):
			var l Label
			if tag == noteGist {
				l = Label(d.byte1())
			} else {
				l = Label(tag - noteGistOnly)
			}
			id, ok := number(st.Result, "C")
			if chains == nil {
				chains = chainsByID(a.NF)
			}
			c := chains[int32(id)]
			if !ok || c == nil || int(l) >= len(labelNames) {
				d.fail(errors.New("step note names no chain of the normal form"))
				break
			}
			st.Note = stepGist(a.cfg, c, l)
			if tag == noteGist {
				st.Note += d.lit()
			}
		default:
			d.fail(fmt.Errorf("bad note tag %d", tag))
		}
		a.Steps = append(a.Steps, st)
	}
}

// NFTables reads the address and token tables at the head of an EncodeNF
// encoding, without decoding the rest: what a caller storing the encoding
// can refer to by index (the index's records do).
func NFTables(b []byte) ([]Address, []Token, error) {
	d := &decoder{b: b}
	if _, _, err := d.start(); err != nil {
		return nil, nil, err
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	return d.addrs, d.toks, nil
}

// start reads what every encoding begins with: the version, the chain and
// its wrapped-native contracts, the address and token tables. Its error is
// a version mismatch; a short or bad head leaves d.err set.
func (d *decoder) start() (chainID uint64, wrapped []Address, err error) {
	if v := d.byte1(); d.err == nil && v != EncodingVersion {
		return 0, nil, fmt.Errorf("normal form encoding version %d, this flowq reads %d", v, EncodingVersion)
	}
	chainID, wrapped = d.head()
	for n := d.small(len(d.b) / 20); n > 0 && d.err == nil; n-- {
		var a Address
		copy(a[:], d.raw(20))
		d.addrs = append(d.addrs, a)
	}
	for n := d.small(len(d.b)); n > 0 && d.err == nil; n-- {
		t := Token{Kind: TokenKind(d.byte1())}
		t.Addr = d.addr()
		if t.HasID() {
			t.ID = d.u256()
		}
		d.toks = append(d.toks, t)
	}
	return chainID, wrapped, nil
}

// defaultWrapped reports whether wn (sorted) are the chain's default
// wrapped-native contracts, which the encoding then leaves out.
func defaultWrapped(chainID uint64, wn []Address) bool {
	net := Networks[chainID]
	if net == nil || len(net.WrappedNative) != len(wn) {
		return false
	}
	m := map[Address]bool{}
	for _, w := range net.WrappedNative {
		m[w] = true
	}
	for _, w := range wn {
		if !m[w] {
			return false
		}
	}
	return true
}

// head reads the chain id and the wrapped-native contracts (nil: the
// network's).
func (d *decoder) head() (uint64, []Address) {
	chainID := d.u()
	n := d.small(1 << 10)
	if n == 0 {
		if Networks[chainID] == nil {
			d.fail(errors.New("default wrapped-native contracts of an unknown chain"))
		}
		return chainID, nil
	}
	wrapped := []Address{}
	for n--; n > 0 && d.err == nil; n-- {
		var a Address
		copy(a[:], d.raw(20))
		wrapped = append(wrapped, a)
	}
	return chainID, wrapped
}

// NFHashAt returns where an EncodeNF encoding holds the transaction's hash
// (32 bytes): a caller that keeps the hash elsewhere can store the
// encoding without them and put them back. Only the bytes before the
// hash are read.
func NFHashAt(b []byte) (int, error) {
	h, err := ReadHead(b)
	if err != nil {
		return 0, err
	}
	return h.HashAt, nil
}

// Head is where an EncodeNF encoding keeps what a caller storing it beside
// other copies of the same addresses, tokens and hash may leave out and
// put back (the index's NF key refers to its record's addresses and
// tokens): byte offsets into the encoding and the tables read.
type Head struct {
	// TablesAt is where the address table's count begins (after the
	// version, the chain id and the wrapped-native contracts).
	TablesAt int
	// Addrs is the address table.
	Addrs []Address
	// ToksAt is where the token table's count begins; Toks the table and
	// TokSpans each entry's bytes [from, to).
	ToksAt   int
	Toks     []Token
	TokSpans [][2]int
	// BodyAt is where the body begins (after the token table): with the
	// balances (gross, whether net, net: AppendBalances), which end at
	// BalancesEnd; HashAt is where the transaction hash (32 bytes) is.
	BodyAt      int
	BalancesEnd int
	HashAt      int
}

// ReadHead reads the head of an EncodeNF encoding (its version, tables
// and the place of its hash) without decoding the rest.
func ReadHead(b []byte) (*Head, error) {
	h := &Head{}
	if err := h.Read(b); err != nil {
		return nil, err
	}
	return h, nil
}

// Read is ReadHead into h, reusing the storage of its tables: a caller
// reading heads in turn (the index's NF keys, as they are written)
// allocates nothing once they are large enough. On an error h holds
// nothing to read.
func (h *Head) Read(b []byte) error {
	addrs, toks, spans := h.Addrs[:0], h.Toks[:0], h.TokSpans[:0]
	*h = Head{Addrs: addrs, Toks: toks, TokSpans: spans}
	d := &decoder{b: b}
	if v := d.byte1(); d.err == nil && v != EncodingVersion {
		return fmt.Errorf("normal form encoding version %d, this flowq reads %d", v, EncodingVersion)
	}
	d.head()
	h.TablesAt = d.i
	n := d.small(len(b) / 20)
	if d.err == nil {
		d.addrs = slices.Grow(addrs, n)[:n]
		for i := range d.addrs {
			copy(d.addrs[i][:], d.raw(20))
		}
	}
	h.ToksAt = d.i
	if n := d.small(len(b)); d.err == nil {
		d.toks = slices.Grow(toks, n)
		h.TokSpans = slices.Grow(spans, n)
		for ; n > 0 && d.err == nil; n-- {
			from := d.i
			t := Token{Kind: TokenKind(d.byte1())}
			t.Addr = d.addr()
			if t.HasID() {
				t.ID = d.u256()
			}
			d.toks = append(d.toks, t)
			h.TokSpans = append(h.TokSpans, [2]int{from, d.i})
		}
	}
	h.BodyAt = d.i
	d.skipDelta()
	d.bool1()
	d.skipDelta()
	h.BalancesEnd = d.i
	d.u() // metadata flags
	h.HashAt = d.i
	d.raw(32)
	if d.err != nil {
		*h = Head{Addrs: addrs, Toks: toks, TokSpans: spans} // the storage, for the next Read
		return d.err
	}
	h.Addrs, h.Toks = d.addrs, d.toks
	return nil
}

// skipDelta reads past a delta, checking its indexes, without keeping it.
func (d *decoder) skipDelta() {
	for n := d.small(len(d.b)); n > 0 && d.err == nil; n-- {
		if d.small(len(d.addrs)) >= len(d.addrs) || d.small(len(d.toks)) >= len(d.toks) {
			d.fail(errors.New("balance entry's address or token out of range"))
			return
		}
		l := int(d.byte1() & 0x7f)
		if l > 32 {
			d.fail(errors.New("amount longer than 32 bytes"))
			return
		}
		d.raw(l)
	}
}

// AppendTokenEntry appends a token table entry as EncodeNF writes it: its
// kind, the index of its contract in the address table addrs, and the id
// of an ERC-721/1155 token (false when addrs lacks the contract).
func AppendTokenEntry(b []byte, t Token, addrs []Address) ([]byte, bool) {
	for i := range addrs {
		if addrs[i] == t.Addr {
			b = append(b, byte(t.Kind))
			b = binary.AppendUvarint(b, uint64(i))
			if t.HasID() {
				b = appendU256(b, &t.ID)
			}
			return b, true
		}
	}
	return b, false
}

// ParseTokenEntry reads the token table entry at the head of b (as
// AppendTokenEntry writes it, its contract an index into addrs) and its
// length (0 when it does not read).
func ParseTokenEntry(b []byte, addrs []Address) (Token, int) {
	d := &decoder{b: b, addrs: addrs}
	t := Token{Kind: TokenKind(d.byte1())}
	t.Addr = d.addr()
	if t.HasID() {
		t.ID = d.u256()
	}
	if d.err != nil || t.Kind > Multi6909 {
		return Token{}, 0
	}
	return t, d.i
}

// AppendBalances appends the balances as an encoding holds them at
// Head.BodyAt: gross, whether net, net, each entry's address and token
// an index into the tables addrs and toks (false when one lacks an entry's).
func AppendBalances(b []byte, addrs []Address, toks []Token, gross Delta, hasNet bool, net Delta) ([]byte, bool) {
	e := &encoder{addrs: table[Address]{keys: addrs}, toks: table[Token]{keys: toks}}
	for _, d := range []Delta{gross, net} {
		for _, x := range d {
			if _, ok := e.addrs.index(x.Addr); !ok {
				return b, false
			}
			if _, ok := e.toks.index(x.Token); !ok {
				return b, false
			}
		}
	}
	b = e.delta(b, gross)
	b = appendBool(b, hasNet)
	return e.delta(b, net), true
}

// BalancesLen is the length of the balances at the head of b (an
// encoding's bytes from Head.BodyAt, its tables addrs and toks); 0 when
// they do not read.
func BalancesLen(b []byte, addrs []Address, toks []Token) int {
	d := &decoder{b: b, addrs: addrs, toks: toks}
	d.skipDelta()
	d.bool1()
	d.skipDelta()
	if d.err != nil {
		return 0
	}
	return d.i
}
