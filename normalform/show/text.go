package show

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowq/flowq/normalform"
)

// WriteTree renders a cash flow tree as an indented tree a person can read:
// call nodes as "CALL from ⇒ to", leaves as "#pos from → to amount", with
// σ, flags and provenance.
func WriteTree(c *normalform.Config, b *strings.Builder, n *normalform.Node) {
	if n == nil {
		b.WriteString("(empty: no transfer survives)\n")
		return
	}
	c = c.ForTree(n)
	writeNode(c, b, n, "", "")
}

func writeNode(c *normalform.Config, b *strings.Builder, n *normalform.Node, first, rest string) {
	b.WriteString(first)
	if n.Leaf != nil {
		b.WriteString(LeafString(c, n.Leaf))
		b.WriteByte('\n')
		return
	}
	f := n.Frame
	fmt.Fprintf(b, "%s %s ⇒ %s  [frame %d]\n", f.Type, c.Short(f.From), c.Short(f.To), f.Index)
	for i, ch := range n.Children {
		if i == len(n.Children)-1 {
			writeNode(c, b, ch, rest+"└─ ", rest+"   ")
		} else {
			writeNode(c, b, ch, rest+"├─ ", rest+"│  ")
		}
	}
}

// LeafString renders one transfer on one line.
func LeafString(c *normalform.Config, t *normalform.Transfer) string {
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
func TransferToJSON(c *normalform.Config, t *normalform.Transfer) TransferJSON {
	j := TransferJSON{Pos: t.Pos, From: normalform.AddrKey(t.From), To: normalform.AddrKey(t.To), Amount: t.Amount.Dec(),
		Token: t.Token.Key(), Standard: t.Token.Kind.String(), Sender: normalform.AddrKey(t.Sender), Event: t.Event.String(), Frame: t.Frame}
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
func TreeToJSON(n *normalform.Node) *NodeJSON {
	if n == nil {
		return nil
	}
	if n.Leaf != nil {
		p := n.Leaf.Pos
		return &NodeJSON{Leaf: &p}
	}
	f := n.Frame
	j := &NodeJSON{Frame: &FrameJSON{Type: f.Type.String(), From: normalform.AddrKey(f.From), To: normalform.AddrKey(f.To), Index: f.Index, Depth: f.Depth}}
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
func MetaToJSON(m *normalform.Meta) MetaJSON {
	j := MetaJSON{ReceiptJSON: ReceiptToJSON(m)}
	j.Tx, j.Block, j.Index, j.From, j.To = names(m)
	return j
}

// ReceiptToJSON converts the receipt's part of metadata.
func ReceiptToJSON(m *normalform.Meta) ReceiptJSON {
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
		j.Miner = normalform.AddrKey(m.Miner)
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
	Shape     string                 `json:"shape"`
	Stats     normalform.DecodeStats `json:"stats"`
	Transfers []TransferJSON         `json:"transfers"`
	T0        *NodeJSON              `json:"t0"`
	Notes     []string               `json:"notes,omitempty"`
}

// MarshalT0 renders a decoded transaction as one line of JSON.
func MarshalT0(c *normalform.Config, tx *normalform.Tx) ([]byte, error) {
	j := T0JSON{MetaJSON: MetaToJSON(&tx.Meta), Shape: tx.Shape, Stats: tx.Stats, T0: TreeToJSON(tx.Root), Notes: tx.Notes,
		Transfers: make([]TransferJSON, 0, len(tx.Transfers))}
	for i := range tx.Transfers {
		j.Transfers = append(j.Transfers, TransferToJSON(c, &tx.Transfers[i]))
	}
	return json.Marshal(j)
}
