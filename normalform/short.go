package normalform

import (
	"slices"
	"sort"
	"strings"
)

// Short forms that stay unambiguous within one output.
//
// ShortAddr writes an address as its first and last four hex digits,
// 0x1234…abcd. Two addresses of one transaction can share that form
// (vanity and CREATE2-mined addresses often start and end with zeros), and
// then a report names two different addresses alike. A Shortener is built
// from the addresses one output can print and gives each the shortest form
// 0x<w digits>…<w digits>, w ≥ 4, that no other address of the set shares:
// both sides widen together, one digit at a time, and only the addresses
// that collide widen. At w = 20 the address is written whole.
//
// The null address is written 0x0. No shortened form can read so (each has
// "…" and at least four digits a side) and no whole address either (40
// digits). A real address whose shortened sides would both be all zeros
// widens until one side shows a digit that is not zero, so 0x0000…0000,
// which a reader takes for the null address, is never printed.
//
// For a transaction's report the set is every address the transaction
// names (sender, recipient, coinbase, the frames' callers and callees, the
// transfers' endpoints, initiators and token contracts), whatever view is
// printed, so one address has one form in every view of the transaction.

// shortDigits is the default number of hex digits a side.
const shortDigits = 4

// Shortener names each address of one output by a short form that no other
// address of that output shares. The zero Shortener (or nil) writes
// ShortAddr's 4+4 forms, except the null address, written 0x0.
type Shortener struct {
	wide  map[Address]int      // digits a side, for the addresses that need more than 4
	alike map[string][]Address // ShortAddr form → the addresses of the set that have it
}

// NewShortener builds the short forms of a set of addresses (duplicates and
// the null address allowed).
func NewShortener(addrs []Address) *Shortener {
	s := &Shortener{wide: map[Address]int{}, alike: map[string][]Address{}}
	// Only addresses that share a 4+4 form widen: group by it. The null
	// address takes part in the group of 0x0000…0000, so that a real
	// address never shortens to all zeros.
	groups := map[[4]byte][]Address{}
	seen := make(map[Address]bool, len(addrs))
	for _, a := range addrs {
		if seen[a] {
			continue
		}
		seen[a] = true
		k := [4]byte{a[0], a[1], a[18], a[19]}
		groups[k] = append(groups[k], a)
	}
	if z := groups[[4]byte{}]; len(z) > 0 && !seen[Address{}] {
		groups[[4]byte{}] = append(z, Address{})
	}
	for k, g := range groups {
		if len(g) > 1 || k == [4]byte{} {
			s.widen(g)
		}
	}
	if !seen[Address{}] {
		// The null address took part but is not printed: a 4+4 form of
		// zeros in old text names the real address.
		f := ShortAddr(Address{})
		s.alike[f] = slices.DeleteFunc(s.alike[f], func(a Address) bool { return a == Address{} })
	}
	return s
}

// widen gives the addresses of one 4+4 form theirs. Two addresses share
// the form of width w exactly when their first 2w interleaved digits
// (first, last, second, second to last, …) are equal. Sorted by that
// interleaving, an address's longest common prefix with any other is with
// a neighbour; its width is one more than half of it.
func (s *Shortener) widen(g []Address) {
	keys := make([][40]byte, len(g))
	idx := make([]int, len(g))
	for i, a := range g {
		keys[i], idx[i] = interleave(a), i
	}
	sort.Slice(idx, func(i, j int) bool { return string(keys[idx[i]][:]) < string(keys[idx[j]][:]) })
	lcp := func(i, j int) int {
		x, y := &keys[idx[i]], &keys[idx[j]]
		n := 0
		for n < len(x) && x[n] == y[n] {
			n++
		}
		return n
	}
	for i, k := range idx {
		a := g[k]
		if a != (Address{}) {
			m := 0
			if i > 0 {
				m = lcp(i-1, i)
			}
			if i+1 < len(idx) {
				m = max(m, lcp(i, i+1))
			}
			if w := m/2 + 1; w > shortDigits {
				s.wide[a] = min(w, 20)
			}
		}
		f := ShortAddr(a)
		s.alike[f] = append(s.alike[f], a)
	}
}

// interleave lists an address's hex digits first, last, second, second to
// last, and so on.
func interleave(a Address) [40]byte {
	var k [40]byte
	for i := 0; i < 20; i++ {
		k[2*i] = nibble(a, i)
		k[2*i+1] = nibble(a, 39-i)
	}
	return k
}

// nibble is an address's i-th hex digit (0 ≤ i < 40) as a number.
func nibble(a Address, i int) byte {
	if i%2 == 0 {
		return a[i/2] >> 4
	}
	return a[i/2] & 0xf
}

// Short is the form of a in this output.
func (s *Shortener) Short(a Address) string {
	if a == (Address{}) {
		return "0x0"
	}
	w := shortDigits
	if s != nil {
		if x, ok := s.wide[a]; ok {
			w = x
		}
	}
	if w == shortDigits {
		return ShortAddr(a)
	}
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2+2*w+len("…"))
	b = append(b, "0x"...)
	for i := 0; i < w; i++ {
		b = append(b, digits[nibble(a, i)])
	}
	if w < 20 {
		b = append(b, "…"...)
		for i := 40 - w; i < 40; i++ {
			b = append(b, digits[nibble(a, i)])
		}
	} else {
		for i := 20; i < 40; i++ {
			b = append(b, digits[nibble(a, i)])
		}
	}
	return string(b)
}

// Rewrite replaces each 4+4 short form (ShortAddr's) in text, written
// before the set was known, by the form of the address it names: the one
// address of the set with that form, else the one of prefer that has it.
// A form that names no address of the set, or several and none preferred
// decides, is left as it is.
func (s *Shortener) Rewrite(text string, prefer ...Address) string {
	if s == nil || !strings.Contains(text, "…") {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "…")
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		start, end := i-6, i+len("…")+4
		if start < 0 || end > len(text) || !isShortForm(text[start:end]) || (start > 0 && isWordByte(text[start-1])) ||
			(end < len(text) && isWordByte(text[end])) {
			b.WriteString(text[:i+len("…")])
			text = text[i+len("…"):]
			continue
		}
		b.WriteString(text[:start])
		form := text[start:end]
		b.WriteString(s.resolve(form, prefer))
		text = text[end:]
	}
}

func (s *Shortener) resolve(form string, prefer []Address) string {
	as := s.alike[form]
	if len(as) == 1 {
		return s.Short(as[0])
	}
	var hit []Address
	for _, p := range prefer {
		if ShortAddr(p) == form && !containsAddr(hit, p) {
			hit = append(hit, p)
		}
	}
	if len(hit) == 1 {
		return s.Short(hit[0])
	}
	return form
}

// isShortForm reports whether t is 0x, four lowercase hex digits, "…",
// four lowercase hex digits.
func isShortForm(t string) bool {
	if len(t) != 6+len("…")+4 || t[:2] != "0x" || t[6:6+len("…")] != "…" {
		return false
	}
	for _, c := range []byte(t[2:6] + t[6+len("…"):]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// TxAddresses lists every address a transaction names: sender, recipient
// and coinbase, the frames' callers, callees and initiators, and the
// transfers' endpoints, initiators and token contracts.
func TxAddresses(tx *Tx) []Address {
	if tx == nil {
		return nil
	}
	out := []Address{tx.Meta.From, tx.Meta.To}
	if tx.Meta.HasHeader {
		out = append(out, tx.Meta.Miner)
	}
	for i := range tx.Transfers {
		t := &tx.Transfers[i]
		out = append(out, t.From, t.To, t.Sender)
		if t.Token.Kind != Native {
			out = append(out, t.Token.Addr)
		}
	}
	return nodeAddresses(tx.Root, out)
}

// nodeAddresses appends the addresses of a cash flow tree: its frames and
// its leaves.
func nodeAddresses(n *Node, out []Address) []Address {
	if n == nil {
		return out
	}
	if f := n.Frame; f != nil {
		out = append(out, f.From, f.To, f.Sender)
	}
	if t := n.Leaf; t != nil {
		out = append(out, t.From, t.To, t.Sender)
		if t.Token.Kind != Native {
			out = append(out, t.Token.Addr)
		}
	}
	for _, ch := range n.Children {
		out = nodeAddresses(ch, out)
	}
	return out
}

// ForTx is c with the short forms of one transaction's output: every
// address the transaction names has a form no other shares. A Config that
// already has short forms is returned as it is.
func (c *Config) ForTx(tx *Tx) *Config {
	if c.short != nil || tx == nil {
		return c
	}
	return c.WithShortener(NewShortener(TxAddresses(tx)))
}

// ForAnalysis is ForTx for an analysis, its principals included: the
// short forms of the analysis's outputs (report, terms, steps, pictures).
func (c *Config) ForAnalysis(a *Analysis) *Config {
	if c.short != nil || a == nil || a.Tx == nil {
		return c
	}
	return c.WithShortener(NewShortener(append(TxAddresses(a.Tx), a.Sender, a.Recipient)))
}

// WithShortener is a copy of c that writes addresses in s's forms.
func (c *Config) WithShortener(s *Shortener) *Config {
	d := *c
	d.short = s
	return &d
}

// Short writes an address for people: in the output's form when c has a
// Shortener, else as ShortAddr.
func (c *Config) Short(a Address) string {
	if c.short == nil {
		return ShortAddr(a)
	}
	return c.short.Short(a)
}

// StepTexts renders a's rewrite log for people, one line a step. The log
// is kept as the kernel wrote it (4+4 forms); when c has short forms, the
// gist of the chain each step built is written again in them, and the
// other forms of a note are read back to their addresses where that is
// unambiguous.
func (c *Config) StepTexts(a *Analysis) []string {
	out := make([]string, len(a.Steps))
	var chains map[int32]*Chain
	for i, s := range a.Steps {
		s.Note = s.NoteText()
		if c.short == nil || s.Note == "" {
			out[i] = s.String()
			continue
		}
		var prefer []Address
		if id, ok := number(s.Result, "C"); ok {
			if chains == nil {
				chains = chainsByID(a.NF)
			}
			if ch := chains[int32(id)]; ch != nil {
				plain := a.cfg
				if plain == nil {
					plain = c.WithShortener(nil)
				}
				prefer = []Address{ch.Origin(), ch.Dest()}
				if l, ok := gistLabel(plain, ch, s.Note); ok {
					rest := s.Note[len(stepGist(plain, ch, l)):]
					s.Note = l.String() + " " + c.Short(ch.Origin()) + "→" + c.Short(ch.Dest()) + " " + c.TokenName(ch.TokIn()) + "→" +
						c.TokenName(ch.TokOut()) + c.short.Rewrite(rest, prefer...)
					out[i] = s.String()
					continue
				}
			}
		}
		s.Note = c.short.Rewrite(s.Note, prefer...)
		out[i] = s.String()
	}
	return out
}
