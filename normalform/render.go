package normalform

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/holiman/uint256"
)

// ShortAddr renders an address as 0x1234…abcd.
func ShortAddr(a Address) string {
	return string(appendShortAddr(make([]byte, 0, 13), a))
}

// appendShortAddr appends ShortAddr(a) to b.
func appendShortAddr(b []byte, a Address) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x', digits[a[0]>>4], digits[a[0]&0xf], digits[a[1]>>4], digits[a[1]&0xf])
	b = append(b, "…"...)
	return append(b, digits[a[18]>>4], digits[a[18]&0xf], digits[a[19]>>4], digits[a[19]&0xf])
}

// FormatUnits renders an amount in base units as an exact decimal with the
// given number of decimals, trailing zeros trimmed: 1500000 with 6 decimals
// is "1.5". No floating point is involved.
func FormatUnits(v *uint256.Int, decimals uint8) string {
	s := v.Dec()
	if decimals == 0 {
		return s
	}
	d := int(decimals)
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	intPart, frac := s[:len(s)-d], strings.TrimRight(s[len(s)-d:], "0")
	if frac == "" {
		return intPart
	}
	return intPart + "." + frac
}

// FormatAmount renders an amount of a token for people: with its symbol and
// decimals when the token is known, in raw base units and the token's short
// address otherwise. NFTs show their id.
func (c *Config) FormatAmount(v *uint256.Int, t Token) string {
	switch t.Kind {
	case NFT721:
		return "ERC-721 " + c.Short(t.Addr) + " #" + t.ID.Dec()
	case Multi1155:
		return v.Dec() + " × ERC-1155 " + c.Short(t.Addr) + " #" + t.ID.Dec()
	case Multi6909:
		return v.Dec() + " × ERC-6909 " + c.Short(t.Addr) + " #" + t.ID.Dec()
	}
	if ti, ok := c.TokenInfo(t); ok {
		return FormatUnits(v, ti.Decimals) + " " + ti.Symbol
	}
	return v.Dec() + " " + c.Short(t.Addr)
}

// WriteTree renders a cash flow tree as an indented tree a person can read:
// call nodes as "CALL from ⇒ to", leaves as "#pos from → to amount", with
// σ, flags and provenance.
func (c *Config) WriteTree(b *strings.Builder, n *Node) {
	if n == nil {
		b.WriteString("(empty: no transfer survives)\n")
		return
	}
	if c.short == nil {
		c = c.WithShortener(NewShortener(nodeAddresses(n, nil)))
	}
	c.writeNode(b, n, "", "")
}

func (c *Config) writeNode(b *strings.Builder, n *Node, first, rest string) {
	b.WriteString(first)
	if n.Leaf != nil {
		b.WriteString(c.LeafString(n.Leaf))
		b.WriteByte('\n')
		return
	}
	f := n.Frame
	fmt.Fprintf(b, "%s %s ⇒ %s  [frame %d]\n", f.Type, c.Short(f.From), c.Short(f.To), f.Index)
	for i, ch := range n.Children {
		if i == len(n.Children)-1 {
			c.writeNode(b, ch, rest+"└─ ", rest+"   ")
		} else {
			c.writeNode(b, ch, rest+"├─ ", rest+"│  ")
		}
	}
}

// LeafString renders one transfer on one line.
func (c *Config) LeafString(t *Transfer) string {
	s := fmt.Sprintf("#%d %s → %s  %s  σ %s", t.Pos, c.Short(t.From), c.Short(t.To), c.FormatAmount(&t.Amount, t.Token), c.Short(t.Sender))
	if t.Flags != 0 {
		s += "  [" + t.Flags.String() + "]"
	}
	if t.LogIndex >= 0 {
		s += fmt.Sprintf("  log %d", t.LogIndex)
	} else {
		s += "  " + t.Event.String()
	}
	return s
}

// --- JSON -----------------------------------------------------------------

// TransferJSON is the JSON form of a transfer. Amounts are decimal strings
// in base units; tokens are lowercase 0x addresses (the native asset is
// 0xeeee…eeee), with "/id" for ERC-721 and ERC-1155.
type TransferJSON struct {
	Pos      int32    `json:"pos"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Amount   string   `json:"amount"`
	Token    string   `json:"token"`
	Standard string   `json:"standard"`
	Symbol   string   `json:"symbol,omitempty"`
	Decimals *uint8   `json:"decimals,omitempty"`
	Sender   string   `json:"sender"`
	Flags    []string `json:"flags,omitempty"`
	Event    string   `json:"event"`
	LogIndex *int32   `json:"log_index,omitempty"`
	Frame    int32    `json:"frame"`
}

// NodeJSON is the JSON form of a cash flow tree node: a leaf names its
// transfer by trace position, a call node carries its frame and children.
type NodeJSON struct {
	Leaf     *int32      `json:"leaf,omitempty"`
	Frame    *FrameJSON  `json:"frame,omitempty"`
	Children []*NodeJSON `json:"children,omitempty"`
}

// FrameJSON is the JSON form of a call frame.
type FrameJSON struct {
	Type  string `json:"type"`
	From  string `json:"from"`
	To    string `json:"to"`
	Index int32  `json:"index"`
	Depth int32  `json:"depth"`
}

// TransferToJSON converts a transfer.
func (c *Config) TransferToJSON(t *Transfer) TransferJSON {
	j := TransferJSON{Pos: t.Pos, From: lowerHex(t.From), To: lowerHex(t.To), Amount: t.Amount.Dec(),
		Token: t.Token.Key(), Standard: t.Token.Kind.String(), Sender: lowerHex(t.Sender), Event: t.Event.String(), Frame: t.Frame}
	if ti, ok := c.TokenInfo(t.Token); ok {
		j.Symbol = ti.Symbol
		d := ti.Decimals
		j.Decimals = &d
	}
	if t.Flags != 0 {
		j.Flags = strings.Split(t.Flags.String(), ",")
	}
	if t.LogIndex >= 0 {
		li := t.LogIndex
		j.LogIndex = &li
	}
	return j
}

// TreeToJSON converts a cash flow tree.
func TreeToJSON(n *Node) *NodeJSON {
	if n == nil {
		return nil
	}
	if n.Leaf != nil {
		p := n.Leaf.Pos
		return &NodeJSON{Leaf: &p}
	}
	f := n.Frame
	j := &NodeJSON{Frame: &FrameJSON{Type: f.Type.String(), From: lowerHex(f.From), To: lowerHex(f.To), Index: f.Index, Depth: f.Depth}}
	for _, ch := range n.Children {
		j.Children = append(j.Children, TreeToJSON(ch))
	}
	return j
}

// MetaJSON is the JSON form of a transaction's metadata: what names it
// (null when the input did not say) and what its receipt says.
type MetaJSON struct {
	Tx    *string `json:"tx"`
	Block *uint64 `json:"block"`
	Index *uint32 `json:"index"`
	From  *string `json:"from"`
	To    *string `json:"to"`
	ReceiptJSON
}

// ReceiptJSON is what a receipt and a block header say of a transaction.
// Cost fields are present only when the input carried them.
type ReceiptJSON struct {
	Status            string  `json:"status"`
	Type              *uint8  `json:"type,omitempty"`
	GasUsed           *uint64 `json:"gas_used,omitempty"`
	EffectiveGasPrice string  `json:"effective_gas_price,omitempty"`
	BaseFee           string  `json:"base_fee,omitempty"`
	Miner             string  `json:"miner,omitempty"`
	Costs             string  `json:"costs"`
}

// MetaToJSON converts metadata; Costs says whether gas costs are known.
func MetaToJSON(m *Meta) MetaJSON {
	j := MetaJSON{ReceiptJSON: ReceiptToJSON(m)}
	if m.HasHash {
		j.Tx = strPtr(m.Hash.Hex())
	}
	if m.HasBlock {
		b := m.Block
		j.Block = &b
	}
	if m.HasIndex {
		i := uint32(m.Index)
		j.Index = &i
	}
	if m.HasFrom {
		j.From = strPtr(lowerHex(m.From))
	}
	if m.HasTo {
		j.To = strPtr(lowerHex(m.To))
	}
	return j
}

// ReceiptToJSON converts the receipt's part of metadata.
func ReceiptToJSON(m *Meta) ReceiptJSON {
	j := ReceiptJSON{Status: m.Status.String(), Costs: "unknown: no receipt"}
	if m.HasReceipt {
		t, g := m.Type, m.GasUsed
		j.Type, j.GasUsed = &t, &g
		j.EffectiveGasPrice = m.EffectiveGasPrice.Dec()
		j.Costs = "known"
		if !m.HasHeader {
			j.Costs = "partial: no block header (base fee and coinbase unknown)"
		}
	}
	if m.HasHeader {
		j.Miner = lowerHex(m.Miner)
		if m.HasBaseFee {
			j.BaseFee = m.BaseFee.Dec()
		}
	}
	return j
}

// T0JSON is what `flowq inspect` prints per transaction before the rewriting
// engine runs: metadata, decode statistics, every transfer and T0.
type T0JSON struct {
	MetaJSON
	Shape     string         `json:"shape"`
	Stats     DecodeStats    `json:"stats"`
	Transfers []TransferJSON `json:"transfers"`
	T0        *NodeJSON      `json:"t0"`
	Notes     []string       `json:"notes,omitempty"`
}

// MarshalT0 renders a decoded transaction as one line of JSON.
func (c *Config) MarshalT0(tx *Tx) ([]byte, error) {
	j := T0JSON{MetaJSON: MetaToJSON(&tx.Meta), Shape: tx.Shape, Stats: tx.Stats, T0: TreeToJSON(tx.Root), Notes: tx.Notes,
		Transfers: make([]TransferJSON, 0, len(tx.Transfers))}
	for i := range tx.Transfers {
		j.Transfers = append(j.Transfers, c.TransferToJSON(&tx.Transfers[i]))
	}
	return json.Marshal(j)
}

// TokenName is a token's symbol when known, else its short address (with
// the id for NFTs).
func (c *Config) TokenName(t Token) string {
	if ti, ok := c.TokenInfo(t); ok {
		return ti.Symbol
	}
	s := c.Short(t.Addr)
	if t.HasID() {
		s += "#" + t.ID.Dec()
	}
	return s
}

// --- step notes -------------------------------------------------------------

// noteKind is what a step's structured note says.
type noteKind uint8

const (
	noNote      noteKind = iota
	gistNote             // the chain's gist under the label
	balanceNote          // the gist, then the balance R16 read: δ at the origin in the entry token
)

// stepNote is a step's note as data: the chain the step built or
// relabelled, its label then, and the configuration whose token names the
// note uses. Chains' endpoints, tokens and balances do not change once
// built, so rendering later says what rendering then would have.
type stepNote struct {
	cfg   *Config
	chain *Chain
	label Label
	kind  noteKind
}

// NoteText is the step's note for people: Note when it is set, else the
// note rendered from the step's data ("" when it has none).
func (s Step) NoteText() string {
	if s.Note != "" || s.note.kind == noNote {
		return s.Note
	}
	n := s.note
	c := n.chain
	switch n.kind {
	case balanceNote:
		d := c.BalanceAt(c.Origin(), c.TokIn())
		return fmt.Sprintf("%s: δ[%s, %s] = %s", gistText(n.cfg, c, n.label), ShortAddr(c.Origin()), n.cfg.TokenName(c.TokIn()), d)
	default:
		return gistText(n.cfg, c, n.label)
	}
}

// gistText renders a chain's label (l), endpoints and tokens: "cycle
// 0x1234…abcd→0x1234…abcd WETH→WETH".
func gistText(cfg *Config, c *Chain, l Label) string {
	b := make([]byte, 0, 64)
	b = append(b, l.String()...)
	b = append(b, ' ')
	b = appendShortAddr(b, c.Origin())
	b = append(b, "→"...)
	b = appendShortAddr(b, c.Dest())
	b = append(b, ' ')
	b = append(b, cfg.TokenName(c.TokIn())...)
	b = append(b, "→"...)
	b = append(b, cfg.TokenName(c.TokOut())...)
	return string(b)
}
