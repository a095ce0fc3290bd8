package show

import (
	"github.com/flowq/flowq/normalform"
)

// The JSON contract: the shapes every JSON output of flowq gives a
// transaction — `flowq inspect --format json` (AnalysisJSON), `show
// --format json` (the same), `flowq export --format jsonl` and `query
// --format json` (a record's row) — so that a field has one name and one
// type wherever it appears:
//
//   - numbers (block, index, counts, gas) are JSON numbers;
//   - exact amounts are decimal strings of base units, signed ("-12"), so
//     that no reader rounds them through a float;
//   - balances are maps from the token (its key: a lowercase 0x address,
//     0xeeee…eeee for the native asset, "/id" for an NFT) to an amount;
//   - lists (reasons, hashes of transactions) are arrays;
//   - what is unknown is null: a block or index the input did not give, the
//     net balance when no receipt gave the costs.

// Amounts is a balance: token key → signed amount in base units, as a
// decimal string. A nil Amounts is null (unknown); an empty one is {}.
type Amounts map[string]string

// AmountsOf converts a balance (never nil: a known balance).
func AmountsOf(d normalform.Delta) Amounts {
	m := make(Amounts, len(d))
	for _, e := range d {
		m[e.Token.Key()] = e.Amount.String()
	}
	return m
}

// TxJSON is what every JSON output says of a transaction, under these
// names and types. An analysis (AnalysisJSON) and an exported record
// (index.ExportJSON) embed it; a query's row of a record
// (repl's JSON mode) gives its fields that the query selects.
type TxJSON struct {
	Tx         *string    `json:"tx"`    // the transaction hash; null when the input did not give it
	Block      *uint64    `json:"block"` // null when unknown
	Index      *uint32    `json:"index"` // position in the block; null when unknown
	From       *string    `json:"from"`  // null when unknown
	To         *string    `json:"to"`    // null for a contract creation, or when unknown
	Verdict    string     `json:"verdict"`
	Tier       string     `json:"tier"`
	Path       string     `json:"path"` // how the verdict's arbitrage was found; "none" without one
	Reasons    []string   `json:"reasons"`
	Gross      Amounts    `json:"gross"`       // the balance at the principals
	Net        Amounts    `json:"net"`         // after costs, wrapped native folded; null when costs are unknown
	CostsKnown bool       `json:"costs_known"` // a receipt gave the costs
	Cycles     int        `json:"cycles"`      // counted arbitrage cycles (normalform.Counts)
	Pools      int        `json:"pools"`
	Hops       int        `json:"hops"`
	Leftovers  int        `json:"leftovers"`
	Hashes     HashesJSON `json:"hashes"`
}

// HashesJSON are the structural hashes of the four equivalence levels.
type HashesJSON struct {
	Exact  string `json:"exact"`
	Shape  string `json:"shape"`
	Tokens string `json:"tokens"`
	Family string `json:"family"`
}

// HashesToJSON converts the four hashes.
func HashesToJSON(h normalform.Hashes) HashesJSON {
	return HashesJSON{Exact: h.Exact.Hex(), Shape: h.Shape.Hex(), Tokens: h.Tokens.Hex(), Family: h.Family.Hex()}
}

// SetCounts fills the counts.
func (j *TxJSON) SetCounts(c normalform.Counts) {
	j.Cycles, j.Pools, j.Hops, j.Leftovers = c.Cycles, c.Pools, c.Hops, c.Leftovers
}

// ReasonStrings converts reasons to a JSON array (never null).
func ReasonStrings(rs []normalform.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

func strPtr(s string) *string { return &s }

// names are what names a transaction (TxJSON's and MetaJSON's first
// fields), each nil where the input did not say.
func names(m *normalform.Meta) (tx *string, block *uint64, index *uint32, from, to *string) {
	if m.HasHash {
		tx = strPtr(m.Hash.Hex())
	}
	if m.HasBlock {
		b := m.Block
		block = &b
	}
	if m.HasIndex {
		i := uint32(m.Index)
		index = &i
	}
	if m.HasFrom {
		from = strPtr(normalform.AddrKey(m.From))
	}
	if m.HasTo {
		to = strPtr(normalform.AddrKey(m.To))
	}
	return
}

// TxSummary is an analysis's TxJSON.
func TxSummary(c *normalform.Config, a *normalform.Analysis) TxJSON {
	m := &a.Tx.Meta
	j := TxJSON{Verdict: a.Verdict.String(), Tier: a.Tier.String(), Path: a.Path().String(),
		Reasons: ReasonStrings(a.Reasons), Gross: AmountsOf(a.Gross), CostsKnown: a.Costs.Known,
		Hashes: HashesToJSON(a.Hashes())}
	j.SetCounts(a.Counts())
	j.Tx, j.Block, j.Index, j.From, j.To = names(m)
	if a.Costs.Known {
		j.Net = AmountsOf(a.Net)
	}
	return j
}
