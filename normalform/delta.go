package normalform

import (
	"bytes"
	"errors"

	"github.com/holiman/uint256"
)

// Signed is an exact signed amount: a sign and a 256-bit magnitude.
// Balances are sums of uint256 amounts; a sum that leaves 256 bits is an
// error (ErrOverflow), never a wrapped or rounded value.
type Signed struct {
	Neg bool
	Abs uint256.Int
}

// ErrOverflow reports a balance beyond 256 bits, which no real token
// reaches; it means the trace carries adversarial amounts.
var ErrOverflow = errors.New("balance exceeds 256 bits (adversarial token amounts?)")

// Sign returns -1, 0 or +1.
func (s *Signed) Sign() int {
	if s.Abs.IsZero() {
		return 0
	}
	if s.Neg {
		return -1
	}
	return 1
}

// Add adds v (negated when neg) to s. It reports overflow.
func (s *Signed) Add(v *uint256.Int, neg bool) bool {
	if v.IsZero() {
		return false
	}
	if s.Abs.IsZero() {
		s.Abs, s.Neg = *v, neg
		return false
	}
	if s.Neg == neg {
		_, over := s.Abs.AddOverflow(&s.Abs, v)
		return over
	}
	if s.Abs.Cmp(v) >= 0 {
		s.Abs.Sub(&s.Abs, v)
	} else {
		var d uint256.Int
		d.Sub(v, &s.Abs)
		s.Abs, s.Neg = d, neg
	}
	if s.Abs.IsZero() {
		s.Neg = false
	}
	return false
}

// AddSigned adds o to s.
func (s *Signed) AddSigned(o *Signed) bool { return s.Add(&o.Abs, o.Neg) }

// Cmp compares s and o as signed numbers: -1, 0 or +1.
func (s Signed) Cmp(o Signed) int {
	ss, so := s.Sign(), o.Sign()
	if ss != so {
		if ss < so {
			return -1
		}
		return 1
	}
	c := s.Abs.Cmp(&o.Abs)
	if ss < 0 {
		return -c
	}
	return c
}

// String renders the amount as a signed decimal in base units.
func (s Signed) String() string {
	var b [81]byte
	out := b[:0]
	if s.Neg && !s.Abs.IsZero() {
		out = append(out, '-')
	}
	return string(AppendDec(out, &s.Abs))
}

// DeltaEntry is one non-zero balance: what Addr received, net, in Token.
type DeltaEntry struct {
	Addr   Address
	Token  Token
	Amount Signed
}

// Delta is a balance (Definition "Balance") as a sorted list of non-zero
// entries, ordered by address then token.
type Delta []DeltaEntry

func compareToken(a, b *Token) int {
	if c := bytes.Compare(a.Addr[:], b.Addr[:]); c != 0 {
		return c
	}
	if a.Kind != b.Kind {
		if a.Kind < b.Kind {
			return -1
		}
		return 1
	}
	return a.ID.Cmp(&b.ID)
}

func compareKey(a *DeltaEntry, addr *Address, tok *Token) int {
	if c := bytes.Compare(a.Addr[:], addr[:]); c != 0 {
		return c
	}
	return compareToken(&a.Token, tok)
}

// TransferDelta is the balance of one transfer: s is debited and d
// credited by a in τ.
func TransferDelta(t *Transfer) Delta {
	if t.From == t.To || t.Amount.IsZero() {
		return nil
	}
	out := Delta{{Addr: t.From, Token: t.Token, Amount: Signed{Neg: true, Abs: t.Amount}},
		{Addr: t.To, Token: t.Token, Amount: Signed{Abs: t.Amount}}}
	if bytes.Compare(t.To[:], t.From[:]) < 0 {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

// Sum returns a + b, dropping entries that cancel.
//
// The result has no spare capacity: when a and b are short the sum is
// merged on the stack and copied out at its length, so entries that
// cancel (the middle address of two joined legs) cost no heap.
func (a Delta) Sum(b Delta) (Delta, error) {
	if len(a)+len(b) > sumStack {
		return sumInto(make(Delta, 0, len(a)+len(b)), a, b)
	}
	var buf [sumStack]DeltaEntry
	out, err := sumInto(buf[:0], a, b)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return Delta{}, nil
	}
	r := make(Delta, len(out))
	copy(r, out)
	return r, nil
}

// sumStack bounds the sums Sum merges on the stack.
const sumStack = 8

// sumInto appends a + b to out, dropping entries that cancel.
func sumInto(out, a, b Delta) (Delta, error) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && compareKey(&a[i], &b[j].Addr, &b[j].Token) < 0):
			out = append(out, a[i])
			i++
		case i == len(a) || compareKey(&a[i], &b[j].Addr, &b[j].Token) > 0:
			out = append(out, b[j])
			j++
		default:
			e := a[i]
			if e.Amount.AddSigned(&b[j].Amount) {
				return nil, ErrOverflow
			}
			if !e.Amount.Abs.IsZero() {
				out = append(out, e)
			}
			i++
			j++
		}
	}
	return out, nil
}

// At returns δ[addr, tok].
func (a Delta) At(addr Address, tok Token) Signed {
	lo, hi := 0, len(a)
	for lo < hi {
		m := (lo + hi) / 2
		if compareKey(&a[m], &addr, &tok) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(a) && a[lo].Addr == addr && a[lo].Token == tok {
		return a[lo].Amount
	}
	return Signed{}
}

// OfAddr returns the entries of addr.
func (a Delta) OfAddr(addr Address) Delta {
	lo, hi := 0, len(a)
	for lo < hi {
		m := (lo + hi) / 2
		if bytes.Compare(a[m].Addr[:], addr[:]) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := lo
	for end < len(a) && a[end].Addr == addr {
		end++
	}
	return a[lo:end]
}
