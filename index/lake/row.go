// Package lake writes flowq's analyses as a Parquet lake: one immutable
// file per aligned block range under DIR/chain=NAME/, written to a temporary
// file beside it, synced and renamed, so that a range is done when its file
// exists and a rerun replaces it whole. Any engine that reads Parquet
// (DuckDB, ClickHouse, Trino, Spark) reads the lake; the package needs no
// Badger and no coordinator.
//
// The columns (Row) are chosen so that every predicate of flowq's query
// language is a column or an expression over columns; ARCHITECTURE.md maps
// them.
package lake

import (
	"math/big"
	"sort"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// SchemaVersion is written into every file's key-value metadata
// (flowq.lake.schema); a change of columns bumps it.
// Version 2 added the token's standard (Amount.Kind) to gross and net;
// version 3 holds normal forms in normalform's encoding version 6 (the nf
// column; issue 22), which a flowq reading version 5 cannot decode.
const SchemaVersion = "3"

// Row is one analysed transaction: one row of a range file. Hashes and
// addresses are strings: 0x and lower-case hex, as flowq prints them (66 and
// 42 characters). Not 32- and 20-byte binary: DuckDB 1.5.6 (the version the
// module proxy serves, duckdb/duckdb#23829 fixed after it) hashes a BLOB
// constant's escaped text when it probes a Parquet Bloom filter, so
// `tx_hash = from_hex('…')` skips the row group that holds it and answers
// nothing; strings probe right. They cost about 29 bytes more per
// distinct hash (ARCHITECTURE.md, "The lake"); the columns whose values
// repeat are dictionary-encoded.
type Row struct {
	Chain   string  `parquet:"chain,dict"`
	Block   uint64  `parquet:"block"`
	TxIndex *uint32 `parquet:"tx_index,optional"` // null when the input did not give it
	TxHash  string  `parquet:"tx_hash"`
	// From is the sender (null when unknown); To the transaction's to (null
	// for a creation); Bot the recipient of the analysis (the to, or the
	// created contract): the query language's `bot is`.
	From   *string `parquet:"from_address,optional"`
	To     *string `parquet:"to_address,optional,dict"`
	Bot    string  `parquet:"bot,dict"`
	Status string  `parquet:"status,dict"`

	// The four structural hashes (exact, shape, tokens, family). Every
	// column with a Bloom filter comes before the first list column.
	HashExact  string `parquet:"hash_exact"`
	HashShape  string `parquet:"hash_shape,dict"`
	HashTokens string `parquet:"hash_tokens,dict"`
	HashFamily string `parquet:"hash_family,dict"`

	Verdict string   `parquet:"verdict,dict"` // arbitrage, warning, none
	Tier    string   `parquet:"tier,dict"`    // confirmed, probable, attempted, uncertain, or empty
	Reasons []string `parquet:"reasons,list"`
	Path    string   `parquet:"path,dict"` // how the detections were found (normalform.Path)
	Mode    string   `parquet:"mode,dict"` // traces or receipts (normalform.Mode)

	// Gross is the balance at the principals per token; Net the balance
	// after costs (native and wrapped native folded), empty unless
	// CostsKnown.
	Gross      []Amount `parquet:"gross,list"`
	Net        []Amount `parquet:"net,list"`
	CostsKnown bool     `parquet:"costs_known"`
	GasUsed    uint64   `parquet:"gas_used"`
	Costs      string   `parquet:"costs"` // gas and builder payments, in the native asset's base units, decimal

	Cycles    int32 `parquet:"cycles"`
	Pools     int32 `parquet:"pools"`
	Hops      int32 `parquet:"hops"`
	Leftovers int32 `parquet:"leftovers"`
	// FlashLoan: a cycle recovered from leftovers (the language's `flash
	// loan`), decoded from the normal form at write time.
	FlashLoan bool `parquet:"flash_loan"`

	// Tokens are the tokens the transfers move (normalform Token.Key:
	// lower-case address, "/id" for ids); TokenAddresses their contracts;
	// Addresses every party of a transfer, the sender and the to. Sorted,
	// without duplicates.
	Tokens         []string `parquet:"tokens,list"`
	TokenAddresses []string `parquet:"token_addresses,list"`
	Addresses      []string `parquet:"addresses,list"`

	AlgebraVersion int32 `parquet:"algebra_version"`
	// NF is normalform.EncodeNF of the analysis: `show` and `same` decode it.
	NF []byte `parquet:"nf,zstd"`
}

// Amount is one token's component of a balance. Amount is exact (signed
// decimal, base units); Key the same value as 33 bytes whose byte order is
// the numeric order (SQL compares it exactly: see AmountKey); Float an
// approximation for sorting and sums. Kind is the token's standard
// (normalform.TokenKind's name: erc20, native, erc721, erc1155, erc6909),
// which Token (its key, the contract and an id) does not say and a row's
// human form names (schema 2).
type Amount struct {
	Token  string  `parquet:"token"`
	Amount string  `parquet:"amount"`
	Key    []byte  `parquet:"amount_key"`
	Float  float64 `parquet:"amount_f64"`
	Kind   string  `parquet:"kind,dict"`
}

// AmountKey is layout.LakeAmountKey (the SQL compares with the same
// bytes).
func AmountKey(s normalform.Signed) []byte { return layout.LakeAmountKey(s) }

// AmountFromKey decodes AmountKey.
func AmountFromKey(k []byte) (normalform.Signed, bool) { return layout.LakeAmountFromKey(k) }

func amountOf(tok normalform.Token, v normalform.Signed) Amount {
	f, _ := new(big.Float).SetInt(v.Abs.ToBig()).Float64()
	if v.Neg {
		f = -f
	}
	return Amount{Token: tok.Key(), Amount: v.String(), Key: AmountKey(v), Float: f, Kind: tok.Kind.String()}
}

// Amounts converts a balance.
func Amounts(d normalform.Delta) []Amount {
	out := make([]Amount, 0, len(d))
	for _, e := range d {
		out = append(out, amountOf(e.Token, e.Amount))
	}
	return out
}

// FromAnalysis builds the row of an analysed transaction. ok is false when
// the transaction has no hash or no block number: such a row has no place
// in a lake ordered by block.
func FromAnalysis(chain string, a *normalform.Analysis) (Row, bool) {
	m := &a.Tx.Meta
	if !m.HasHash || !m.HasBlock {
		return Row{}, false
	}
	r := Row{Chain: chain, Block: m.Block, TxHash: m.Hash.Hex(), Bot: normalform.AddrKey(a.Recipient), Status: m.Status.String(),
		Verdict: a.Verdict.String(), Tier: a.Tier.String(), Path: a.Path().String(), Mode: a.Tx.Mode().String(),
		Gross: Amounts(a.Gross), CostsKnown: a.Costs.Known, GasUsed: a.Costs.GasUsed, Costs: a.Costs.Total.Dec(),
		AlgebraVersion: int32(normalform.AlgebraVersion), NF: normalform.EncodeNF(a)}
	if m.HasIndex && m.Index >= 0 && int64(m.Index) <= int64(^uint32(0)) {
		i := uint32(m.Index)
		r.TxIndex = &i
	}
	if m.HasFrom {
		f := normalform.AddrKey(m.From)
		r.From = &f
	}
	if m.HasTo {
		t := normalform.AddrKey(m.To)
		r.To = &t
	}
	for _, x := range a.Reasons {
		r.Reasons = append(r.Reasons, string(x))
	}
	if a.Costs.Known {
		r.Net = Amounts(a.Net)
	}
	c := a.Counts()
	r.Cycles, r.Pools, r.Hops, r.Leftovers = int32(c.Cycles), int32(c.Pools), int32(c.Hops), int32(c.Leftovers)
	r.FlashLoan = HasFlashLoan(a)
	h := a.Hashes()
	r.HashExact, r.HashShape, r.HashTokens, r.HashFamily = h.Exact.Hex(), h.Shape.Hex(), h.Tokens.Hex(), h.Family.Hex()

	addrs := map[normalform.Address]bool{a.Recipient: true}
	if m.HasFrom {
		addrs[m.From] = true
	}
	if m.HasTo {
		addrs[m.To] = true
	}
	toks := map[normalform.Token]bool{}
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		addrs[t.From], addrs[t.To] = true, true
		tok := t.Token
		if !tok.HasID() {
			tok.ID = uint256.Int{}
		}
		toks[tok] = true
	}
	r.Addresses = SortedAddresses(addrs)
	taddrs := map[normalform.Address]bool{}
	for t := range toks {
		r.Tokens = append(r.Tokens, t.Key())
		taddrs[t.Addr] = true
	}
	sort.Strings(r.Tokens)
	r.Tokens = compactStrings(r.Tokens)
	r.TokenAddresses = SortedAddresses(taddrs)
	return r, true
}

// HasFlashLoan reports a cycle recovered from leftovers: the query
// language's `flash loan`.
func HasFlashLoan(a *normalform.Analysis) bool {
	for _, c := range a.Cycles {
		if c.Label == normalform.LeftoverCycle {
			return true
		}
	}
	return false
}

// SortedAddresses returns the set's addresses as 0x hex, sorted (which is
// their byte order).
func SortedAddresses(set map[normalform.Address]bool) []string {
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, normalform.AddrKey(a))
	}
	sort.Strings(out)
	return out
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// less orders rows by block, then position (unknown positions last), then
// hash: the order of a range file.
func less(a, b *Row) bool {
	if a.Block != b.Block {
		return a.Block < b.Block
	}
	ai, bi := uint64(1)<<32, uint64(1)<<32
	if a.TxIndex != nil {
		ai = uint64(*a.TxIndex)
	}
	if b.TxIndex != nil {
		bi = uint64(*b.TxIndex)
	}
	if ai != bi {
		return ai < bi
	}
	return a.TxHash < b.TxHash
}
