package layout

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/holiman/uint256"
	"github.com/zeebo/xxh3"

	"github.com/flowq/flowq/normalform"
)

// RecordVersion is the version of the record encoding below.
const RecordVersion = 7

// Record is what the index keeps of one analysed transaction. Every
// secondary key of the transaction is a function of its Record (keys), so
// a record can be replaced, or its keys checked, without the analysis.
type Record struct {
	Hash      normalform.Hash
	Loc       Loc // block and index; UnknownBlock / UnknownIndex when the input did not give them
	From      normalform.Address
	To        normalform.Address // zero for a contract creation (HasTo false)
	HasFrom   bool
	HasTo     bool
	Recipient normalform.Address // the bot: the transaction's to, or the created contract
	Status    normalform.Status

	Verdict normalform.Verdict
	Tier    normalform.Tier
	// Path is how the transaction's detections were found (normalform
	// Analysis.Path); PathNone without detections.
	Path normalform.Path
	// Mode is what the analysis was made from: traces, or receipts alone
	// (normalform Tx.Mode).
	Mode    normalform.Mode
	Reasons []normalform.Reason

	// Gross is the balance at the principals per token; Net the balance
	// after costs (native and wrapped native folded), meaningful only when
	// CostsKnown.
	Gross      []Amount
	Net        []Amount
	CostsKnown bool
	GasUsed    uint64
	Costs      uint256.Int // gas and builder payments, in the native asset

	Counts normalform.Counts
	Hashes normalform.Hashes
	// AlgebraVersion is normalform.AlgebraVersion when the hashes and NF
	// were made.
	AlgebraVersion uint8

	// Addresses and Tokens are what the transaction's transfers touch, and
	// its from and to: sorted, without duplicates.
	Addresses []normalform.Address
	Tokens    []normalform.Token

	// NF is normalform.EncodeNF of the analysis. It is not in the
	// record's value but under its own key (NFKey, NFValue): a decode
	// leaves it nil, and the index's readers that return records whole
	// set it from that key (SetNF).
	NF []byte
	// Latency is the time the analysis took (normalization, hashes and
	// encoding). It is the only measured value of a record, and the only
	// field a re-ingest of the same transaction does not overwrite.
	Latency time.Duration

	// NFSum is the XXH3-64 of NF, as the record's value holds it: set
	// by NewRecord and by a decode (which leaves NF nil), checked by SetNF.
	NFSum uint64

	// Partial is set on a record read by a header scan (Index.Filter):
	// Hash, Loc, Status, Verdict, Tier, Path, Mode, Reasons, Counts, Hashes,
	// CostsKnown, HasFrom, HasTo, AlgebraVersion and Latency are set, and
	// From, To and Recipient when the scan asked for addresses; Gross,
	// Net, GasUsed, Costs, Addresses, Tokens and NF are not. A row's
	// record (DepthRow: Index.FilterRows, Lookup.Rows) is Partial too, and
	// has all but Addresses, Tokens and NF.
	Partial bool
}

// IDs are the dictionary ids of a record's shape, tokens and family
// hashes (IDs[level]; IDs[0] unused).
type IDs = [4]uint32

// Amount is one component of a balance.
type Amount struct {
	Token  normalform.Token
	Amount normalform.Signed
}

// ErrNoHash reports a transaction whose input did not give its hash: it
// cannot be indexed.
var ErrNoHash = errors.New("the input does not give the transaction's hash: it cannot be indexed")

// NewRecord builds the record of an analysis.
func NewRecord(a *normalform.Analysis, latency time.Duration) (*Record, error) {
	m := &a.Tx.Meta
	if !m.HasHash {
		return nil, ErrNoHash
	}
	r := &Record{Hash: m.Hash, Loc: Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: m.Hash},
		From: m.From, HasFrom: m.HasFrom, To: m.To, HasTo: m.HasTo, Recipient: a.Recipient, Status: m.Status,
		Verdict: a.Verdict, Tier: a.Tier, Path: a.Path(), Mode: a.Tx.Mode(), Reasons: append([]normalform.Reason(nil), a.Reasons...),
		CostsKnown: a.Costs.Known, GasUsed: a.Costs.GasUsed, Costs: a.Costs.Total,
		Counts: a.Counts(), Hashes: a.Hashes(), AlgebraVersion: normalform.AlgebraVersion,
		NF: normalform.EncodeNF(a), Latency: latency}
	r.NFSum = xxh3.Hash(r.NF)
	if m.HasBlock && m.Block <= MaxBlock { // a block past MaxBlock is kept in the NF, not in keys
		r.Loc.Block = m.Block
		if m.HasIndex && m.Index >= 0 && int64(m.Index) <= int64(MaxIndex) {
			r.Loc.Index = uint32(m.Index)
		}
	}
	r.Loc = r.Loc.normal()
	r.Gross = amounts(a.Gross)
	if a.Costs.Known {
		r.Net = amounts(a.Net)
	}
	// The addresses and tokens, each once, in key order: appended with
	// their repeats into a pooled scratch, sorted and compacted (no map,
	// no allocation per comparison), then copied out at their size.
	sc := recordScratch.Get().(*recordBuf)
	defer sc.release()
	addrs, toks := sc.addrs[:0], sc.toks[:0]
	if m.HasFrom {
		addrs = append(addrs, m.From)
	}
	if m.HasTo {
		addrs = append(addrs, m.To)
	}
	addrs = append(addrs, a.Recipient)
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		addrs = append(addrs, t.From, t.To)
		toks = append(toks, NormalToken(t.Token))
	}
	slices.SortFunc(addrs, func(x, y normalform.Address) int { return bytes.Compare(x[:], y[:]) })
	slices.SortFunc(toks, compareTokens)
	sc.addrs, sc.toks = addrs, toks
	r.Addresses = slices.Clone(slices.Compact(addrs))
	if toks = slices.Compact(toks); len(toks) > 0 {
		r.Tokens = slices.Clone(toks)
	}
	return r, nil
}

// recordBuf is NewRecord's scratch for sorting addresses and tokens.
type recordBuf struct {
	addrs []normalform.Address
	toks  []normalform.Token
}

var recordScratch = sync.Pool{New: func() any { return &recordBuf{} }}

func (p *recordBuf) release() {
	if cap(p.addrs) <= 4096 && cap(p.toks) <= 4096 { // one grown by a large transaction is dropped
		p.addrs, p.toks = p.addrs[:0], p.toks[:0]
		recordScratch.Put(p)
	}
}

// compareTokens orders tokens as their bytes in keys do (appendToken:
// kind, address, and the id for the kinds that carry one).
func compareTokens(x, y normalform.Token) int {
	if x.Kind != y.Kind {
		return cmp.Compare(x.Kind, y.Kind)
	}
	if c := bytes.Compare(x.Addr[:], y.Addr[:]); c != 0 || !x.HasID() {
		return c
	}
	return x.ID.Cmp(&y.ID)
}

// amounts keeps a balance's tokens and amounts: every entry of Gross and
// Net is at the recipient.
func amounts(d normalform.Delta) []Amount {
	out := make([]Amount, 0, len(d))
	for _, e := range d {
		out = append(out, Amount{Token: e.Token, Amount: e.Amount})
	}
	return out
}

// Analysis decodes the record's normal form (normalform.DecodeNF).
func (r *Record) Analysis() (*normalform.Analysis, error) { return normalform.DecodeNF(r.NF) }

// KV is one key and its value.
type KV struct{ K, V []byte }

// Keys returns every key of the record that is a function of it alone:
// the record's own first (value enc), then its NF key (value NFValue;
// nil when the record's NF is not set, as on a record decoded without
// it: enough to delete the key), then its secondary keys, which carry no
// value. The recipient has no addr key: its bot key (of the same tag)
// stands for it, and an address lookup walks both. The txhash key
// (which lists every transaction whose hash begins alike) and the bot's
// first-seen key (which depends on the bot's other transactions) are not
// among them: put maintains them. ids are the record's dictionary ids.
func (r *Record) Keys(enc []byte, id IDs) []KV { return r.KeysWith(nil, enc, id) }

// FixedKeys are the keys of a record (Keys) that do not depend on the
// dictionary's ids: its NF key (with its value), its exact hash, verdict,
// profit, address and token keys. An ingest's analysers build them
// (Encoded.Fixed), so that the writer, the ingest's one serial stage,
// only adds the keys that need the ids it assigns (KeysWith).
type FixedKeys struct {
	loc  Loc  // the position they were built for
	keys []KV // NF, exact hash, then verdict, profit, address and token keys, in Keys' order
}

// FixedKeys builds the record's FixedKeys, at its position.
func (r *Record) FixedKeys() *FixedKeys {
	net := 0
	if r.CostsKnown {
		net = len(r.Net)
	}
	lw := r.locWidth()
	// Every key goes into one slab sized once (keyBound per key): no
	// allocation per key. A key is a capped slice of the slab, so
	// nothing appended after it can reach into it.
	size := (1 + lw) + (8 + lw) + (3 + lw) + (len(r.Addresses)+len(r.Tokens))*(7+lw)
	size += (len(r.Gross) + net) * (2 + len(Tag{}) + len(Bucket{}) + lw)
	kb := keyBuilder{slab: make([]byte, 0, size), out: make([]KV, 0, 3+len(r.Gross)+net+len(r.Addresses)+len(r.Tokens))}
	kb.add(NFKey(r.Loc), r.NFValue())
	kb.add(HashKey(normalform.Exact, Short(r.Hashes.Of(normalform.Exact)), 0, r.Loc), nil)
	kb.add(VerdictKey(r.Verdict, r.Tier, r.Loc), nil)
	for _, a := range r.Gross {
		kb.add(ProfitKey(Gross, a.Token, a.Amount, r.Loc), nil)
	}
	if r.CostsKnown {
		for _, a := range r.Net {
			if !r.GrossHas(a) { // else its gross key stands for it (schema 13: the net side reads both)
				kb.add(ProfitKey(Net, a.Token, a.Amount, r.Loc), nil)
			}
		}
	}
	for _, a := range r.Addresses {
		if a != r.Recipient { // its bot key stands for it (AddrLookupPrefixes)
			kb.add(AddrKey(a, r.Loc), nil)
		}
	}
	for _, t := range r.Tokens {
		kb.add(TokenKey(t, r.Loc), nil)
	}
	return &FixedKeys{loc: r.Loc, keys: kb.out}
}

// KeysWith is Keys, taking the keys of f (the record's FixedKeys)
// instead of building them; nil, or built at another position, it
// builds them.
func (r *Record) KeysWith(f *FixedKeys, enc []byte, id IDs) []KV {
	if f == nil || f.loc != r.Loc {
		f = r.FixedKeys()
	}
	lw := r.locWidth()
	kb := keyBuilder{slab: make([]byte, 0, (1+lw)+3*(8+lw)+(11+lw)), out: make([]KV, 0, len(f.keys)+5)}
	kb.add(TxKey(r.Loc), enc)
	kb.out = append(kb.out, f.keys[:2]...) // NF, exact hash
	for l := normalform.Shape; l <= normalform.Family; l++ {
		kb.add(HashKey(l, Short(r.Hashes.Of(l)), id[l], r.Loc), nil)
	}
	kb.add(BotKey(r.Recipient, id[normalform.Shape], r.Loc), nil)
	return append(kb.out, f.keys[2:]...)
}

// locWidth is the width of the record's position in its keys.
func (r *Record) locWidth() int {
	if !r.Loc.Known() {
		return LocWidth + len(r.Loc.Tx)
	}
	return LocWidth
}

// keyBuilder appends keys to one slab.
type keyBuilder struct {
	slab []byte
	out  []KV
}

func (kb *keyBuilder) add(k Key, v []byte) {
	s := len(kb.slab)
	kb.slab = k.Append(kb.slab)
	kb.out = append(kb.out, KV{kb.slab[s:len(kb.slab):len(kb.slab)], v})
}

// GrossHas reports whether the record's gross holds a's token with a's
// amount (as a net component of every token but the native and wrapped
// native ones does).
func (r *Record) GrossHas(a Amount) bool {
	for i := range r.Gross {
		if NormalToken(r.Gross[i].Token) == NormalToken(a.Token) && r.Gross[i].Amount.Cmp(a.Amount) == 0 {
			return true
		}
	}
	return false
}

// --- encoding ----------------------------------------------------------------
//
// A record value (version 7) is a header, which scans decode to filter
// and group without the rest, and a body; the normal form is under its
// own key (NFKey), its value NFValue:
//
//	u8      RecordVersion
//	u8      AlgebraVersion
//	uvarint Latency in nanoseconds (the bytes after it are the record's
//	        content, compared on re-ingest)
//	hash    the transaction hash
//	u8      flags: 1 from known, 2 to known, 4 costs known, 8 recipient
//	        differs from to (recipient follows)
//	u8      status, u8 verdict, u8 tier, u8 path (normalform.Path), u8 mode
//	        (normalform.Mode: 0 traces, 1 receipts)
//	uvarint cycles, pools, hops, leftovers
//	uvarint dictionary ids of the shape, tokens and family hashes
//	uvarint number of dictionary addresses (DictAddrs), each its
//	        dictionary id (LevelAddr; version 7): the first entries of
//	        the address table the arefs below refer to
//	hash    exact
//	uvarint number of reasons, each: u8 code (reasonCodes), or 0 and a string
//	-- the body
//	u64     XXH3-64 of the NF (normalform.EncodeNF's bytes, the hash in
//	        them) under the record's NF key
//	aref    from, [aref to], [aref recipient]
//	amounts gross
//	when costs known: amounts net, uvarint gas used, uint costs
//	-- what a row does not show (DepthRow stops before it)
//	uvarint number of addresses, each aref
//	uvarint number of tokens, each tref
//
// The position is the record's key (keys.go), not part of the value.
// aref and tref refer to the addresses and tokens the value has named
// before them (its dictionary addresses first), in order: uvarint i > 0
// is the i-th; 0 is followed
// by the address (20 bytes) or the token written out, which then becomes
// the next entry (an address or token is written out once, and never
// when an entry has it). amounts:
// uvarint count, each tref and signed. token written out: u8 kind, aref
// of its contract, and for ERC-721/1155 the id as uint. signed: u8 sign (0 or 1), uint. uint: u8
// length and the minimal big-endian bytes (0..32). string and bytes:
// uvarint length and the bytes. The encoding is deterministic: equal
// records (with equal ids) have equal bytes.

const (
	flagFrom = 1 << iota
	flagTo
	flagCosts
	flagRecipient
)

// reasonCodes are the one-byte codes of the reasons; append only.
var reasonCodes = []normalform.Reason{"", normalform.ReasonNoCycles, normalform.ReasonLeftovers, normalform.ReasonFinalNeg,
	normalform.ReasonFinalMixed, normalform.ReasonCostsUnknown, normalform.ReasonInnerCycle, normalform.ReasonBalanceMixed,
	normalform.ReasonNegProfit, normalform.ReasonPromoted, normalform.ReasonSelfCall, normalform.ReasonBuilder,
	normalform.ReasonPayout, normalform.ReasonUnexplained, normalform.ReasonUnwitnessed, normalform.ReasonReceiptsOnly,
	normalform.ReasonV4Netted}

func reasonCode(r normalform.Reason) byte {
	for i, c := range reasonCodes {
		if i > 0 && c == r {
			return byte(i)
		}
	}
	return 0
}

// tables are the addresses and tokens a value has written out so far,
// in order (aref, tref).
type tables struct {
	addrs []normalform.Address
	toks  []normalform.Token
	ids   []uint32 // a decode's: the dictionary ids of addrs' first entries
	// A row's decode (RowDecoder.Row) resolves a dictionary address when
	// an aref first reads it (names, with the entry's pending flag set),
	// not before: a row does not show From, whose address is often the
	// only one of its record that the dictionary cache does not hold.
	names   Names
	pending []bool // by entry of ids: not resolved yet
	// memo: a RowDecoder's addresses resolved so far, by id, direct
	// mapped. The dictionary only grows and an id names one address for
	// good, so an entry stays true for the decoder's one dictionary. A
	// scan's tokens and bots recur: a hit is one compare in a 24 KB
	// table where names reaches into the cache of every name (random
	// reads over megabytes).
	memo *[memoSize]addrMemo
}

const memoSize = 1024

type addrMemo struct {
	id   uint32 // 0: empty (no dictionary id is 0)
	addr normalform.Address
}

// resolve gives the table's entry i (of ids) its address, if it has
// none yet; an id the dictionary lacks is the reader's error.
func (r *recReader) resolve(t *tables, i int) {
	if !t.pending[i] {
		return
	}
	t.pending[i] = false
	id := t.ids[i]
	m := &t.memo[id%memoSize]
	if m.id == id {
		t.addrs[i] = m.addr
		return
	}
	h, ok := t.names(LevelAddr, id)
	if !ok {
		if r.err == nil {
			r.err = fmt.Errorf("%w: address id %d is not in the dictionary", ErrBadRecord, id)
		}
		return
	}
	t.addrs[i] = NameAddr(h)
	m.id, m.addr = id, t.addrs[i]
}

// The tables hold a handful of entries: a linear search is cheaper
// than a map.
func (t *tables) appendAddr(b []byte, a normalform.Address) []byte {
	for i := range t.addrs {
		if t.addrs[i] == a {
			return binary.AppendUvarint(b, uint64(i+1))
		}
	}
	t.addrs = append(t.addrs, a)
	return append(append(b, 0), a[:]...)
}

func (t *tables) appendToken(b []byte, x normalform.Token) []byte {
	for i := range t.toks {
		if t.toks[i] == x {
			return binary.AppendUvarint(b, uint64(i+1))
		}
	}
	t.toks = append(t.toks, x)
	b = append(b, 0, byte(x.Kind))
	b = t.appendAddr(b, x.Addr) // a token's contract is often an address of the record too
	if x.HasID() {
		b = appendUint(b, &x.ID)
	}
	return b
}

// Encoded is a record's value in two parts around the dictionary ids,
// which only the writer knows: the analysers encode the parts, the
// writer joins them (Join).
type Encoded struct {
	Pre  []byte // versions, latency, hash, flags, status, verdict, tier, counts
	Post []byte // exact hash, reasons, body
	// Dict are the record's dictionary addresses (DictAddrs), 20 bytes
	// each: the writer gives Join their ids, in this order.
	Dict []byte
	// Fixed are the record's keys that need no id (Record.FixedKeys),
	// or nil: the writer builds them (Record.KeysWith).
	Fixed *FixedKeys
}

// Join is the whole value with the record's ids: its hashes' (id) and
// its dictionary addresses' (aid, one for each of Dict's, in order).
func (e *Encoded) Join(id IDs, aid []uint32) []byte {
	if len(aid) != len(e.Dict)/20 {
		panic(fmt.Sprintf("layout: Join given %d address ids for %d dictionary addresses", len(aid), len(e.Dict)/20))
	}
	b := make([]byte, 0, len(e.Pre)+16+4*len(aid)+len(e.Post))
	b = append(b, e.Pre...)
	for l := normalform.Shape; l <= normalform.Family; l++ {
		b = binary.AppendUvarint(b, uint64(id[l]))
	}
	b = binary.AppendUvarint(b, uint64(len(aid)))
	for _, x := range aid {
		b = binary.AppendUvarint(b, uint64(x))
	}
	return append(b, e.Post...)
}

// DictAddrs appends to dst the addresses a record names through the
// dictionary (LevelAddr) rather than writing them out: from, to and the
// recipient, then the contracts of the tokens of its gross, its net
// (costs known) and its token list, each once, in that order. They are
// the addresses that repeat across transactions (a bot's, its senders',
// the traded tokens'); the pools and intermediaries, often seen once,
// are written out. The order is a function of the record: a decoder
// checks it (DepthFull), so that a record has one encoding.
func (r *Record) DictAddrs(dst []normalform.Address) []normalform.Address {
	add := func(a normalform.Address) {
		for i := range dst {
			if dst[i] == a {
				return
			}
		}
		dst = append(dst, a)
	}
	add(r.From)
	if r.HasTo {
		add(r.To)
	}
	add(r.Recipient)
	for i := range r.Gross {
		add(r.Gross[i].Token.Addr)
	}
	if r.CostsKnown {
		for i := range r.Net {
			add(r.Net[i].Token.Addr)
		}
	}
	for i := range r.Tokens {
		add(r.Tokens[i].Addr)
	}
	return dst
}

func (r *Record) flags() byte {
	var f byte
	if r.HasFrom {
		f |= flagFrom
	}
	if r.HasTo {
		f |= flagTo
	}
	if r.CostsKnown {
		f |= flagCosts
	}
	if !r.HasTo || r.Recipient != r.To {
		f |= flagRecipient
	}
	return f
}

// Parts returns the record's value in its two parts.
func (r *Record) Parts() *Encoded {
	// Both parts are written into a pooled scratch (its tables too),
	// then copied into one allocation of their exact size.
	sc := partsScratch.Get().(*partsBuf)
	defer sc.release()
	t := &sc.t
	// The table begins with the dictionary addresses, so the body refers
	// to them as to an address written out before.
	t.addrs = r.DictAddrs(t.addrs[:0])
	nd := len(t.addrs)
	pre := sc.pre[:0]
	pre = append(pre, RecordVersion, r.AlgebraVersion)
	pre = binary.AppendUvarint(pre, uint64(r.Latency))
	pre = append(pre, r.Hash[:]...)
	f := r.flags()
	pre = append(pre, f, byte(r.Status), byte(r.Verdict), byte(r.Tier), byte(r.Path), byte(r.Mode))
	for _, n := range []int{r.Counts.Cycles, r.Counts.Pools, r.Counts.Hops, r.Counts.Leftovers} {
		pre = binary.AppendUvarint(pre, uint64(n))
	}
	b := sc.post[:0]
	b = append(b, r.Hashes.Exact[:]...)
	b = binary.AppendUvarint(b, uint64(len(r.Reasons)))
	for _, x := range r.Reasons {
		c := reasonCode(x)
		b = append(b, c)
		if c == 0 {
			b = appendBytes(b, []byte(x))
		}
	}
	b = binary.BigEndian.AppendUint64(b, r.sum())
	b = t.appendAddr(b, r.From)
	if f&flagTo != 0 {
		b = t.appendAddr(b, r.To)
	}
	if f&flagRecipient != 0 {
		b = t.appendAddr(b, r.Recipient)
	}
	b = t.appendAmounts(b, r.Gross)
	if r.CostsKnown {
		b = t.appendAmounts(b, r.Net)
		b = binary.AppendUvarint(b, r.GasUsed)
		b = appendUint(b, &r.Costs)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Addresses)))
	for _, a := range r.Addresses {
		b = t.appendAddr(b, a)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Tokens)))
	for _, x := range r.Tokens {
		b = t.appendToken(b, x)
	}
	sc.pre, sc.post = pre, b
	one := make([]byte, len(pre)+len(b)+20*nd)
	n := copy(one, pre)
	m := n + copy(one[n:], b)
	for i, a := range t.addrs[:nd] {
		copy(one[m+20*i:], a[:])
	}
	return &Encoded{Pre: one[:n:n], Post: one[n:m:m], Dict: one[m:]}
}

// partsBuf is Parts' scratch: its tables and the two parts' buffers.
type partsBuf struct {
	t         tables
	pre, post []byte
}

var partsScratch = sync.Pool{New: func() any {
	return &partsBuf{t: tables{addrs: make([]normalform.Address, 0, 8), toks: make([]normalform.Token, 0, 4)},
		pre: make([]byte, 0, 64), post: make([]byte, 0, 512)}
}}

// release empties the scratch and gives it back (one grown past 64 KB
// by a large record is dropped).
func (p *partsBuf) release() {
	if cap(p.post) > 64<<10 || cap(p.t.addrs) > 4096 || cap(p.t.toks) > 4096 {
		return
	}
	p.t.addrs, p.t.toks = p.t.addrs[:0], p.t.toks[:0]
	partsScratch.Put(p)
}

// Encode returns the record's value bytes, with its hashes' dictionary
// ids and its dictionary addresses' (aid: an id for each of DictAddrs,
// in order).
func (r *Record) Encode(id IDs, aid []uint32) []byte { return r.Parts().Join(id, aid) }

// NFValue is the value of a record's NF key (appendNF's bytes; nil
// without an NF). It refers to the record's addresses and tokens, so it
// is read back with the record it was written with (SetNF).
func (r *Record) NFValue() []byte {
	if r.NF == nil {
		return nil
	}
	return appendNF(make([]byte, 0, len(r.NF)/2+16), r.NF, r)
}

// sum is the XXH3-64 of the record's NF: of NF when it is set, else the
// one its decode read.
func (r *Record) sum() uint64 {
	if r.NF != nil {
		return xxh3.Hash(r.NF)
	}
	return r.NFSum
}

// ErrNFMismatch reports an NF key that does not belong to its record.
var ErrNFMismatch = errors.New("the normal form stored beside the record is not the one the record was written with")

// SetNF sets the record's NF from its NF key's value v, which must give
// the NF the record was written with (its XXH3-64); v is not kept. The
// record must be whole (decoded to DepthFull): the value refers to its
// addresses and tokens.
func (r *Record) SetNF(v []byte) error {
	if r.Partial {
		return fmt.Errorf("tx %s at %s: its normal form is read with the whole record, not a partial one", r.Hash.Hex(), r.Loc)
	}
	rd := &recReader{b: v}
	nf := rd.nf(r)
	if rd.err == nil && len(rd.b) != 0 {
		rd.fail()
	}
	if rd.err != nil { // a value that does not read against this record: another record's, or damaged
		return fmt.Errorf("tx %s at %s: its normal form: %w (%w)", r.Hash.Hex(), r.Loc, ErrNFMismatch, rd.err)
	}
	if xxh3.Hash(nf) != r.NFSum {
		return fmt.Errorf("tx %s at %s: %w", r.Hash.Hex(), r.Loc, ErrNFMismatch)
	}
	r.NF = nf
	return nil
}

// The forms of an NF value (its first byte): nfRaw, or nfShared with
// the bits nfCut and nfBalances.
const (
	nfRaw      = 0 // uvarint length and the NF's bytes (an NF whose head does not read)
	nfCut      = 1 // the transaction hash left out (the record's)
	nfShared   = 2 // the NF's tables by reference to the record's
	nfBalances = 4 // the NF's balances left out (the record's gross and net at its recipient)
)

// nfAddrs are the addresses an NF value's address table refers to: the
// record's addresses, then its tokens' contracts (uvarint i > 0 is the
// i-th of them).
func (r *Record) nfAddrs() []normalform.Address {
	out := make([]normalform.Address, 0, len(r.Addresses)+len(r.Tokens))
	out = append(out, r.Addresses...)
	for _, t := range r.Tokens {
		out = append(out, t.Addr)
	}
	return out
}

// appendNF writes a record's NF (normalform.EncodeNF's bytes, read with
// normalform.ReadHead) without what the record holds:
//
//	u8      form: 2, plus 1 when the NF's transaction hash is the
//	        record's, plus 4 when its balances are the record's gross and
//	        net at the record's recipient (normalform.AppendBalances)
//	bytes   the NF's bytes before its tables (version, chain, wrapped native)
//	uvarint number of addresses of the NF's table, each: uvarint i > 0,
//	        the record's i-th (nfAddrs), or 0 and the address (20 bytes)
//	uvarint number of tokens of the NF's table, each: uvarint j > 0, the
//	        record's j-th token (its table entry rebuilt: kind, the index
//	        of its contract in the NF's address table, id), or 0 and the
//	        entry's bytes as the NF has them
//	        the rest of the NF, without the balances (form bit 4) and
//	        the hash (form bit 1)
//
// An NF whose head does not read is form 0: bytes.
func appendNF(b, nf []byte, r *Record) []byte {
	// The head, the balances and the token entries are read and built
	// in a pooled scratch (this runs on the writer, once a record).
	sc := nfScratch.Get().(*nfBuf)
	defer sc.release()
	h := &sc.h
	if err := h.Read(nf); err != nil {
		return appendBytes(append(b, nfRaw), nf)
	}
	form := byte(nfShared)
	cut := bytes.Equal(nf[h.HashAt:h.HashAt+32], r.Hash[:])
	if cut {
		form |= nfCut
	}
	sc.gross, sc.net = r.atRecipient(sc.gross[:0], r.Gross), r.atRecipient(sc.net[:0], r.Net)
	gross, hasNet, net := sc.gross, r.CostsKnown, sc.net
	var buf [256]byte
	bal, ok := normalform.AppendBalances(buf[:0], h.Addrs, h.Toks, gross, hasNet, net)
	if ok && bytes.Equal(bal, nf[h.BodyAt:h.BalancesEnd]) {
		form |= nfBalances
	}
	b = append(b, form)
	b = appendBytes(b, nf[:h.TablesAt])
	b = binary.AppendUvarint(b, uint64(len(h.Addrs)))
	for _, a := range h.Addrs {
		i := r.nfAddrIndex(a)
		if i < 0 {
			b = append(append(b, 0), a[:]...)
			continue
		}
		b = binary.AppendUvarint(b, uint64(i+1))
	}
	b = binary.AppendUvarint(b, uint64(len(h.Toks)))
	scratch := sc.tok[:0]
	defer func() { sc.tok = scratch[:0] }()
	for k, t := range h.Toks {
		raw := nf[h.TokSpans[k][0]:h.TokSpans[k][1]]
		if j := indexToken(r.Tokens, NormalToken(t)); j >= 0 {
			var ok bool
			scratch, ok = normalform.AppendTokenEntry(scratch[:0], r.Tokens[j], h.Addrs)
			if ok && bytes.Equal(scratch, raw) {
				b = binary.AppendUvarint(b, uint64(j+1))
				continue
			}
		}
		b = append(append(b, 0), raw...)
	}
	from := h.BodyAt
	if form&nfBalances != 0 {
		from = h.BalancesEnd
	}
	if cut {
		b = append(b, nf[from:h.HashAt]...)
		return append(b, nf[h.HashAt+32:]...)
	}
	return append(b, nf[from:]...)
}

// nfBuf is appendNF's scratch.
type nfBuf struct {
	h          normalform.Head
	gross, net normalform.Delta
	tok        []byte
}

var nfScratch = sync.Pool{New: func() any { return &nfBuf{} }}

// release gives the scratch back (one grown by a large NF is dropped).
func (p *nfBuf) release() {
	if cap(p.h.Addrs) > 4096 || cap(p.h.Toks) > 4096 || cap(p.gross) > 4096 || cap(p.net) > 4096 || cap(p.tok) > 4096 {
		return
	}
	p.gross, p.net = p.gross[:0], p.net[:0]
	nfScratch.Put(p)
}

// atRecipient appends the amounts to d as balance entries at the
// recipient (balances' entries, into storage the caller keeps).
func (r *Record) atRecipient(d normalform.Delta, as []Amount) normalform.Delta {
	for _, a := range as {
		d = append(d, normalform.DeltaEntry{Addr: r.Recipient, Token: a.Token, Amount: a.Amount})
	}
	return d
}

// balances are the record's gross and net as an NF holds them: at the
// recipient, net when costs are known.
func (r *Record) balances() (gross normalform.Delta, hasNet bool, net normalform.Delta) {
	at := func(as []Amount) normalform.Delta {
		d := make(normalform.Delta, 0, len(as))
		for _, a := range as {
			d = append(d, normalform.DeltaEntry{Addr: r.Recipient, Token: a.Token, Amount: a.Amount})
		}
		return d
	}
	return at(r.Gross), r.CostsKnown, at(r.Net)
}

// nfAddrIndex is the place of a in nfAddrs (-1: not there), without
// building it.
func (r *Record) nfAddrIndex(a normalform.Address) int {
	for i := range r.Addresses {
		if r.Addresses[i] == a {
			return i
		}
	}
	for i := range r.Tokens {
		if r.Tokens[i].Addr == a {
			return len(r.Addresses) + i
		}
	}
	return -1
}

func indexToken(ts []normalform.Token, t normalform.Token) int {
	for i := range ts {
		if ts[i] == t {
			return i
		}
	}
	return -1
}

// nf reads what appendNF wrote for rec, and returns the NF's bytes.
func (r *recReader) nf(rec *Record) []byte {
	form := r.u8()
	switch {
	case r.err != nil:
		return nil
	case form == nfRaw:
		return append([]byte(nil), r.take(r.count(1))...)
	case form&^(nfCut|nfBalances) != nfShared:
		r.fail()
		return nil
	}
	head := r.take(r.count(1))
	out := make([]byte, 0, 3*len(r.b)+64)
	out = append(out, head...)
	n := r.count(1)
	out = binary.AppendUvarint(out, uint64(n))
	univ := rec.nfAddrs()
	addrs := make([]normalform.Address, 0, n)
	for k := 0; k < n && r.err == nil; k++ {
		var a normalform.Address
		switch i := r.uvarint(); {
		case i == 0:
			a = r.addr()
		case i <= uint64(len(univ)):
			a = univ[i-1]
		default:
			r.fail()
		}
		addrs = append(addrs, a)
		out = append(out, a[:]...)
	}
	n = r.count(1)
	out = binary.AppendUvarint(out, uint64(n))
	toks := make([]normalform.Token, 0, n)
	for k := 0; k < n && r.err == nil; k++ {
		switch j := r.uvarint(); {
		case j == 0:
			t, l := normalform.ParseTokenEntry(r.b, addrs)
			if l == 0 {
				r.fail()
			}
			toks = append(toks, t)
			out = append(out, r.take(l)...)
		case j <= uint64(len(rec.Tokens)):
			var ok bool
			toks = append(toks, rec.Tokens[j-1])
			if out, ok = normalform.AppendTokenEntry(out, rec.Tokens[j-1], addrs); !ok {
				r.fail()
			}
		default:
			r.fail()
		}
	}
	if r.err != nil {
		return nil
	}
	if form&nfBalances != 0 {
		gross, hasNet, net := rec.balances()
		var ok bool
		if out, ok = normalform.AppendBalances(out, addrs, toks, gross, hasNet, net); !ok {
			r.fail()
			return nil
		}
	}
	if form&nfBalances == 0 {
		l := normalform.BalancesLen(r.b, addrs, toks)
		if l == 0 {
			r.fail()
			return nil
		}
		out = append(out, r.take(l)...)
	}
	if form&nfCut != 0 {
		_, k := binary.Uvarint(r.b) // the metadata's flags, before the hash
		if k <= 0 {
			r.fail()
			return nil
		}
		out = append(out, r.b[:k]...)
		out = append(out, rec.Hash[:]...)
		r.b = r.b[k:]
	}
	out = append(out, r.b...)
	r.b = nil
	return out
}

func appendBytes(b, s []byte) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }

func appendUint(b []byte, x *uint256.Int) []byte {
	n := x.ByteLen()
	w := x.Bytes32() // on the stack: Int.Bytes would allocate a copy
	return append(append(b, byte(n)), w[32-n:]...)
}

func (t *tables) appendAmounts(b []byte, as []Amount) []byte {
	b = binary.AppendUvarint(b, uint64(len(as)))
	for _, a := range as {
		b = t.appendToken(b, a.Token)
		sign := byte(0)
		if a.Amount.Neg && !a.Amount.Abs.IsZero() {
			sign = 1
		}
		b = appendUint(append(b, sign), &a.Amount.Abs)
	}
	return b
}

// ContentOf is the record's content: the value after the versions and the
// latency (nil when they do not read).
func ContentOf(b []byte) []byte {
	if len(b) < 3 {
		return nil
	}
	_, n := binary.Uvarint(b[2:])
	if n <= 0 {
		return nil
	}
	return b[2+n:]
}

// SameContent reports whether two encoded records differ at most in their
// latency.
func SameContent(a, b []byte) bool {
	ca, cb := ContentOf(a), ContentOf(b)
	return ca != nil && cb != nil && a[0] == b[0] && a[1] == b[1] && bytes.Equal(ca, cb)
}

// HashOf reads the transaction hash from a record value.
func HashOf(b []byte) (normalform.Hash, bool) {
	var h normalform.Hash
	c := ContentOf(b)
	if len(c) < 32 || b[0] != RecordVersion {
		return h, false
	}
	copy(h[:], c)
	return h, true
}

// ErrBadRecord reports a record value that does not decode.
var ErrBadRecord = errors.New("bad record encoding")

type recReader struct {
	b   []byte
	err error
}

func (r *recReader) fail() {
	if r.err == nil {
		r.err = ErrBadRecord
	}
}

func (r *recReader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.fail()
		return make([]byte, max(n, 0))
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *recReader) u8() byte { return r.take(1)[0] }

func (r *recReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a list length, bounded by the bytes left (each element takes
// at least min bytes).
func (r *recReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *recReader) addr() (a normalform.Address) {
	copy(a[:], r.take(20))
	return a
}

func (r *recReader) uint(x *uint256.Int) {
	n := int(r.u8())
	if n > 32 {
		r.fail()
		return
	}
	v := r.take(n)
	if n > 0 && v[0] == 0 {
		r.fail() // not minimal: two encodings of one value
	}
	x.SetBytes(v)
}

func (r *recReader) token() normalform.Token {
	t := normalform.Token{Kind: normalform.TokenKind(r.u8()), Addr: r.addr()}
	if t.Kind > normalform.Multi6909 {
		r.fail()
	}
	if t.HasID() {
		r.uint(&t.ID)
	}
	return t
}

// aref reads an address: an entry of the table, or written out (and
// then added to it) when the table does not have it.
func (r *recReader) aref(t *tables) normalform.Address {
	return r.arefAs(t, true)
}

// arefAs is aref; with resolve false, a dictionary entry the table has
// not resolved yet is left so (its address zero): the reader does not
// want it.
func (r *recReader) arefAs(t *tables, resolve bool) normalform.Address {
	i := r.uvarint()
	if i == 0 {
		a := r.addr()
		for j := range t.pending { // every entry, before the table is compared with a
			r.resolve(t, j)
		}
		for _, x := range t.addrs {
			if x == a {
				r.fail() // not canonical: the table has it
			}
		}
		t.addrs = append(t.addrs, a)
		return a
	}
	if i > uint64(len(t.addrs)) {
		r.fail()
		return normalform.Address{}
	}
	if resolve && i <= uint64(len(t.pending)) {
		r.resolve(t, int(i-1))
	}
	return t.addrs[i-1]
}

func (r *recReader) tref(t *tables) normalform.Token {
	i := r.uvarint()
	if i == 0 {
		x := normalform.Token{Kind: normalform.TokenKind(r.u8())}
		if x.Kind > normalform.Multi6909 {
			r.fail()
		}
		x.Addr = r.aref(t)
		if x.HasID() {
			r.uint(&x.ID)
		}
		for _, y := range t.toks {
			if y == x {
				r.fail()
			}
		}
		t.toks = append(t.toks, x)
		return x
	}
	if i > uint64(len(t.toks)) {
		r.fail()
		return normalform.Token{}
	}
	return t.toks[i-1]
}

// amounts reads a list of amounts, into out's array when it has room
// (out empty; nil: a new array).
func (r *recReader) amounts(t *tables, out []Amount) []Amount {
	n := r.count(3)
	if out == nil || cap(out) < n {
		out = make([]Amount, 0, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, Amount{}) // read in place: an Amount is 96 bytes
		a := &out[len(out)-1]
		a.Token = r.tref(t)
		sign := r.u8()
		r.uint(&a.Amount.Abs)
		if sign > 1 || (sign == 1 && a.Amount.Abs.IsZero()) {
			r.fail()
		}
		a.Amount.Neg = sign == 1
	}
	return out
}

// Names resolves a dictionary id of a level to its hash (false: the
// dictionary has no such id at that level).
type Names func(level normalform.Level, id uint32) (normalform.Hash, bool)

// Depth is how much of a record a decode reads: a record's header only,
// the header and the principals' addresses, or all of it.
type Depth uint8

// The decode depths.
const (
	DepthHeader Depth = iota // Record.Partial: the header's fields
	DepthAddrs               // Record.Partial: the header's and From, To, Recipient
	DepthRow                 // Record.Partial: all but Addresses, Tokens and NF (what a row shows)
	DepthFull                // the whole record but its NF (under its own key: SetNF)
	DepthWhole               // DepthFull, and the reader reads the NF key (DecodeInto decodes as DepthFull)
)

// DecodeRecord decodes a record value; loc is its key's position, names
// resolves its dictionary ids.
func DecodeRecord(loc Loc, b []byte, names Names) (*Record, error) {
	return DecodeAt(loc, b, names, DepthFull)
}

// DecodeAt decodes a record value to depth d (DepthHeader, DepthAddrs:
// a Partial record).
func DecodeAt(loc Loc, b []byte, names Names, d Depth) (*Record, error) {
	rec, _, err := DecodeRecordIDs(loc, b, names, d)
	return rec, err
}

// DecodeRecordids decodes a record and its dictionary ids.
func DecodeRecordIDs(loc Loc, b []byte, names Names, d Depth) (*Record, IDs, error) {
	return DecodeInto(&Record{}, loc, b, names, d)
}

// DecodeInto decodes into rec (a scan's reused header: its Reasons'
// array is reused).
func DecodeInto(rec *Record, loc Loc, b []byte, names Names, d Depth) (*Record, IDs, error) {
	return decodeInto(rec, loc, b, names, d, nil)
}

// decodeInto is DecodeInto; with s, its tables are s's and rec's Gross
// and Net arrays are reused (RowDecoder.Row).
func decodeInto(rec *Record, loc Loc, b []byte, names Names, d Depth, s *RowDecoder) (*Record, IDs, error) {
	var id IDs
	var gross, net []Amount
	if s != nil {
		gross, net = rec.Gross[:0], rec.Net[:0]
	}
	var f byte
	var rest []byte
	if s != nil && s.fronted(loc, b) {
		f, rest = s.fromFront(rec, b)
	} else {
		var err error
		if f, rest, err = decodeFront(rec, loc, b); err != nil {
			return nil, id, err
		}
	}
	rec.Partial = d < DepthFull
	// row: RowDecoder.Row's decode, of what a row shows. It leaves
	// Hashes and From zero, their ids read but not resolved, and resolves
	// the other dictionary addresses as they are read.
	row := s != nil && d == DepthRow
	r := &recReader{b: rest}
	for l := normalform.Shape; l <= normalform.Family && r.err == nil; l++ {
		n := r.uvarint()
		if n == 0 || n > math.MaxUint32 {
			r.fail()
			break
		}
		id[l] = uint32(n)
		if row {
			continue // a row shows no hash: its id is read, not resolved
		}
		h, ok := names(l, id[l])
		if !ok {
			if r.err == nil {
				r.err = fmt.Errorf("%w: %s id %d is not in the dictionary", ErrBadRecord, l, n)
			}
			break
		}
		*[...]*normalform.Hash{nil, &rec.Hashes.Shape, &rec.Hashes.Tokens, &rec.Hashes.Family}[l] = h
	}
	// The dictionary addresses' ids: skipped here, resolved below when
	// the decode reads past the header.
	nd := r.count(1)
	dictIDs := r.b
	for i := 0; i < nd && r.err == nil; i++ {
		r.uvarint()
	}
	if r.err == nil {
		dictIDs = dictIDs[:len(dictIDs)-len(r.b)]
	}
	copy(rec.Hashes.Exact[:], r.take(32))
	n := r.count(1)
	for i := 0; i < n && r.err == nil; i++ {
		c := int(r.u8())
		switch {
		case c == 0:
			s := r.take(r.count(1))
			if reasonCode(normalform.Reason(s)) != 0 {
				r.fail() // not canonical: it has a code
			}
			rec.Reasons = append(rec.Reasons, normalform.Reason(s))
		case c < len(reasonCodes):
			rec.Reasons = append(rec.Reasons, reasonCodes[c])
		default:
			r.fail()
		}
	}
	if d == DepthHeader {
		return rec.done(r, id)
	}
	rec.NFSum = binary.BigEndian.Uint64(r.take(8))
	var t *tables
	if s != nil {
		t = &s.t
		t.addrs, t.toks, t.ids, t.pending = t.addrs[:0], t.toks[:0], t.ids[:0], t.pending[:0]
	} else {
		// the tables and their first arrays in one allocation
		fresh := &struct {
			t tables
			a [8]normalform.Address
			i [8]uint32
		}{}
		fresh.t = tables{addrs: fresh.a[:0], ids: fresh.i[:0]}
		t = &fresh.t
	}
	dr := recReader{b: dictIDs}
	if row {
		t.names = names
		if t.memo == nil {
			t.memo = new([memoSize]addrMemo)
		}
	}
	for i := 0; i < nd && r.err == nil; i++ {
		x := dr.uvarint()
		var h normalform.Hash
		ok := x != 0 && x <= math.MaxUint32
		if ok && !row {
			h, ok = names(LevelAddr, uint32(x))
		}
		if !ok {
			r.err = fmt.Errorf("%w: address id %d is not in the dictionary", ErrBadRecord, x)
			break
		}
		// A record's writer names an address by its one id, so an
		// address twice is an id twice; ids compare in a word where
		// addresses cost a call each (memequal: 5% of a million-record
		// find's CPU). Two ids naming one address is a fault of the
		// dictionary, which a whole decode still meets (sameDict).
		if slices.Contains(t.ids, uint32(x)) {
			r.fail() // not canonical: an address twice
		}
		t.ids = append(t.ids, uint32(x))
		if row {
			// zero until resolved, appended as a constant: the profile
			// of a million-record find put 4.6% of its CPU on copying the
			// zeroed h (two overlapping 16-byte moves waiting on the
			// store that zeroed it); the find's CPU moved within its noise
			t.addrs = append(t.addrs, normalform.Address{})
			t.pending = append(t.pending, true)
		} else {
			t.addrs = append(t.addrs, NameAddr(h))
		}
	}
	rec.From = r.arefAs(t, !row)
	if rec.HasTo {
		rec.To = r.aref(t)
	}
	rec.Recipient = rec.To
	if f&flagRecipient != 0 {
		rec.Recipient = r.aref(t)
	} else if !rec.HasTo {
		r.fail()
	}
	if d == DepthAddrs {
		return rec.done(r, id)
	}
	rec.Gross = r.amounts(t, gross)
	if rec.CostsKnown {
		if s != nil && net == nil {
			net, s.net = s.net[:0], nil
		}
		rec.Net = r.amounts(t, net)
		rec.GasUsed = r.uvarint()
		r.uint(&rec.Costs)
	} else if s != nil && cap(net) > cap(s.net) {
		s.net = net // a record without costs has no Net: the next one that has costs and no array of its own takes it
	}
	if d == DepthRow {
		return rec.done(r, id)
	}
	n = r.count(1)
	for i := 0; i < n && r.err == nil; i++ {
		rec.Addresses = append(rec.Addresses, r.aref(t))
	}
	n = r.count(1)
	for i := 0; i < n && r.err == nil; i++ {
		rec.Tokens = append(rec.Tokens, r.tref(t))
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	if r.err == nil && !sameDict(rec, t.addrs[:nd]) {
		r.fail() // not canonical: the dictionary addresses are not the record's
	}
	return rec.done(r, id)
}

// sameDict reports whether got are rec's dictionary addresses
// (DictAddrs), without allocating for a record of a few.
func sameDict(rec *Record, got []normalform.Address) bool {
	var buf [8]normalform.Address
	want := rec.DictAddrs(buf[:0])
	return slices.Equal(want, got)
}

func (rec *Record) done(r *recReader, id IDs) (*Record, IDs, error) {
	if r.err != nil {
		return nil, id, fmt.Errorf("tx %s: %w", rec.Hash.Hex(), r.err)
	}
	return rec, id, nil
}

// Reader is the records' byte reader for the index's other values (its
// markers): it remembers its first error (ErrBadRecord) and reads zeros
// after it.
type Reader struct{ r recReader }

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{recReader{b: b}} }

// Take reads n bytes.
func (x *Reader) Take(n int) []byte { return x.r.take(n) }

// U8 reads a byte.
func (x *Reader) U8() byte { return x.r.u8() }

// Uvarint reads a varint.
func (x *Reader) Uvarint() uint64 { return x.r.uvarint() }

// Count reads a list length bounded by the bytes left (each element at
// least min bytes).
func (x *Reader) Count(min int) int { return x.r.count(min) }

// Fail marks the value bad.
func (x *Reader) Fail() { x.r.fail() }

// Done is the first error, or ErrBadRecord when bytes are left over.
func (x *Reader) Done() error {
	if x.r.err == nil && len(x.r.b) != 0 {
		x.r.fail()
	}
	return x.r.err
}

// AppendBytes appends s with its length before it, as records write bytes.
func AppendBytes(b, s []byte) []byte { return appendBytes(b, s) }
