package normalform

import (
	"fmt"
	"strings"

	"github.com/holiman/uint256"
)

// The names and amounts the algebra's own texts use — terms, block
// findings (normalform/block) and the kernel's step notes (rendered when shown, by
// NoteText). Presentation (trees, analyses, JSON shapes, pictures) is in
// package normalform/show.

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

// FormatSigned renders a signed amount for people, like FormatAmount.
func (c *Config) FormatSigned(s Signed, t Token) string {
	sign := "+"
	if s.Neg {
		sign = "-"
	}
	if s.Abs.IsZero() {
		sign = ""
	}
	return sign + c.FormatAmount(&s.Abs, t)
}

// TokenName is a token's symbol when known, else its short address (with
// the id for NFTs).
func (c *Config) TokenName(t Token) string {
	if ti, ok := c.TokenInfo(t); ok {
		return ti.Symbol
	}
	return string(c.appendTokenName(nil, t))
}

// appendTokenName appends TokenName(t) to b, building no string for a
// known token or an unshortened address.
func (c *Config) appendTokenName(b []byte, t Token) []byte {
	if ti, ok := c.TokenInfo(t); ok {
		return append(b, ti.Symbol...)
	}
	if c.short == nil {
		b = appendShortAddr(b, t.Addr)
	} else {
		b = append(b, c.short.Short(t.Addr)...)
	}
	if t.HasID() {
		b = append(append(b, '#'), t.ID.Dec()...)
	}
	return b
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
// relabelled and the configuration whose token names the note uses; the
// chain's label then and the note's kind are the step's (Step.noteLabel,
// Step.noteKind). Chains' endpoints, tokens and balances do not change
// once built, so rendering later says what rendering then would have.
type stepNote struct {
	cfg   *Config
	chain *Chain
}

// NoteText is the step's note for people: Note when it is set, else the
// note rendered from the step's data ("" when it has none).
func (s Step) NoteText() string {
	if s.Note != "" || s.noteKind == noNote {
		return s.Note
	}
	return string(s.appendNoteText(make([]byte, 0, 64)))
}

// appendNoteText appends NoteText() to b (the encoder's steps render
// notes into one reused buffer).
func (s *Step) appendNoteText(b []byte) []byte {
	if s.Note != "" || s.noteKind == noNote {
		return append(b, s.Note...)
	}
	n := &s.note
	c := n.chain
	b = appendGist(b, n.cfg, c, s.noteLabel)
	if s.noteKind == balanceNote {
		d := c.BalanceAt(c.Origin(), c.TokIn())
		b = fmt.Appendf(b, ": δ[%s, %s] = %s", ShortAddr(c.Origin()), n.cfg.TokenName(c.TokIn()), d)
	}
	return b
}

// gistText renders a chain's label (l), endpoints and tokens: "cycle
// 0x1234…abcd→0x1234…abcd WETH→WETH".
func gistText(cfg *Config, c *Chain, l Label) string {
	return string(appendGist(make([]byte, 0, 64), cfg, c, l))
}

// appendGist appends gistText(cfg, c, l) to b.
func appendGist(b []byte, cfg *Config, c *Chain, l Label) []byte {
	b = append(b, l.String()...)
	b = append(b, ' ')
	b = appendShortAddr(b, c.Origin())
	b = append(b, "→"...)
	b = appendShortAddr(b, c.Dest())
	b = append(b, ' ')
	b = cfg.appendTokenName(b, c.TokIn())
	b = append(b, "→"...)
	return cfg.appendTokenName(b, c.TokOut())
}

// ForTree is c with a shortener for the addresses of a cash flow tree
// (c itself when it has one), as ForAnalysis is for an analysis.
func (c *Config) ForTree(n *Node) *Config {
	if c.short != nil {
		return c
	}
	return c.WithShortener(NewShortener(nodeAddresses(n, nil)))
}
