package block

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
)

// The findings' binary form (issue 22): what a block's report holds that
// its transactions' records do not give cheaply — partial, missing,
// count, the builder's totals, the sandwiches and back-runs — without the
// Txs and Swaps lists (a function of the records: Roles gives the rows'
// roles back from the findings). It is exact: DecodeFindings gives back
// every field AppendFindings was given but Txs and Swaps.
//
//	uvarint count (the header's, 0 unknown)
//	uvarint len(missing), then each index as a uvarint gap from the one before (+1)
//	u8      flags: 1 partial
//	amount  builder payments, priority fees, total; uvarint unknown costs
//	uvarint len(strings), then each string (below): the table the
//	        findings name transactions, addresses and tokens by position in
//	uvarint len(sandwiches), each a sandwich; uvarint len(back-runs), each a back-run
//
// A string is u8 0, uvarint n and n bytes when it is "0x" and the
// lowercase hex of those bytes (a hash, an address, a fungible token),
// else u8 1, uvarint n and its n bytes. An amount is u8 0 for "", u8 1 or
// 2 (non-negative, negative) with uvarint n and the magnitude's n
// big-endian bytes when the string is the decimal big.Int prints, else u8
// 3, uvarint n and the string's bytes. A swap is uvarint index, then the
// table positions of its tx, pool, token in, token out, sender and bot,
// then amount in and out. A block without findings costs about 15 bytes.

// ErrBadFindings reports findings bytes that do not decode.
var ErrBadFindings = errors.New("bad block findings encoding")

type strTable struct {
	pos  map[string]uint64
	list []string
}

func (t *strTable) ref(s string) uint64 {
	if p, ok := t.pos[s]; ok {
		return p
	}
	if t.pos == nil {
		t.pos = map[string]uint64{}
	}
	p := uint64(len(t.list))
	t.pos[s] = p
	t.list = append(t.list, s)
	return p
}

// AppendFindings appends the binary form of r's findings to b.
func (r *Report) AppendFindings(b []byte) []byte {
	var t strTable
	// The body first (it fills the table), then the table before it.
	var body []byte
	swap := func(s *Swap) {
		body = binary.AppendUvarint(body, uint64(s.Index))
		for _, x := range []string{s.Tx, s.Pool, s.In, s.Out, s.Sender, s.Bot} {
			body = binary.AppendUvarint(body, t.ref(x))
		}
		body = appendAmount(body, s.AmountIn)
		body = appendAmount(body, s.AmountOut)
	}
	swaps := func(l []Swap) {
		body = binary.AppendUvarint(body, uint64(len(l)))
		for i := range l {
			swap(&l[i])
		}
	}
	ref := func(x Ref) {
		body = binary.AppendUvarint(body, uint64(x.Index))
		body = binary.AppendUvarint(body, t.ref(x.Tx))
	}
	body = binary.AppendUvarint(body, uint64(len(r.Sandwiches)))
	for i := range r.Sandwiches {
		s := &r.Sandwiches[i]
		body = binary.AppendUvarint(body, t.ref(s.Sender))
		body = binary.AppendUvarint(body, t.ref(s.Bot))
		ref(s.Front)
		ref(s.Back)
		body = binary.AppendUvarint(body, uint64(len(s.Pools)))
		for _, p := range s.Pools {
			body = binary.AppendUvarint(body, t.ref(p))
		}
		swaps(s.FrontSwaps)
		swaps(s.BackSwaps)
		swaps(s.Victims)
		body = binary.AppendUvarint(body, t.ref(s.Token))
		body = appendAmount(body, s.Gain)
		keys := make([]string, 0, len(s.Left))
		for k := range s.Left {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		body = binary.AppendUvarint(body, uint64(len(keys)))
		for _, k := range keys {
			body = binary.AppendUvarint(body, t.ref(k))
			body = appendAmount(body, s.Left[k])
		}
		body = appendAmount(body, s.BuilderPaid)
		body = appendAmount(body, s.Costs)
		body = appendAmount(body, s.Net)
	}
	body = binary.AppendUvarint(body, uint64(len(r.Backruns)))
	for i := range r.Backruns {
		br := &r.Backruns[i]
		ref(br.Ref)
		body = binary.AppendUvarint(body, t.ref(br.Sender))
		body = binary.AppendUvarint(body, t.ref(br.Bot))
		body = binary.AppendUvarint(body, t.ref(br.Token))
		body = appendAmount(body, br.Gain)
		swaps(br.Swaps)
		swaps(br.Corrects)
	}

	b = binary.AppendUvarint(b, uint64(max(r.Count, 0)))
	b = binary.AppendUvarint(b, uint64(len(r.Missing)))
	prev := -1
	for _, m := range r.Missing {
		b = binary.AppendUvarint(b, uint64(m-prev-1)) // Missing is ascending
		prev = m
	}
	var flags byte
	if r.Partial {
		flags |= 1
	}
	b = append(b, flags)
	b = appendAmount(b, r.Builder.Payments)
	b = appendAmount(b, r.Builder.PriorityFees)
	b = appendAmount(b, r.Builder.Total)
	b = binary.AppendUvarint(b, uint64(max(r.Builder.Unknown, 0)))
	b = binary.AppendUvarint(b, uint64(len(t.list)))
	for _, s := range t.list {
		b = appendString(b, s)
	}
	return append(b, body...)
}

func appendString(b []byte, s string) []byte {
	if raw, ok := hexBytes(s); ok {
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(len(raw)))
		return append(b, raw...)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// hexBytes reads "0x" and lowercase hex that encodes back to s.
func hexBytes(s string) ([]byte, bool) {
	if !strings.HasPrefix(s, "0x") || len(s)%2 != 0 {
		return nil, false
	}
	raw, err := hex.DecodeString(s[2:])
	if err != nil || "0x"+hex.EncodeToString(raw) != s {
		return nil, false
	}
	return raw, true
}

func appendAmount(b []byte, s string) []byte {
	if s == "" {
		return append(b, 0)
	}
	if v, ok := new(big.Int).SetString(s, 10); ok && v.String() == s {
		kind := byte(1)
		if v.Sign() < 0 {
			kind = 2
		}
		mag := v.Abs(v).Bytes()
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(len(mag)))
		return append(b, mag...)
	}
	b = append(b, 3)
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// findingsReader reads the binary form; the first error sticks.
type findingsReader struct {
	b   []byte
	off int
	err error
	tab []string
}

func (d *findingsReader) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d", ErrBadFindings, what, d.off)
	}
}

func (d *findingsReader) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.off += n
	return v
}

// count reads a length or an index (at most MaxInt32).
func (d *findingsReader) count(what string) int {
	v := d.uvarint(what)
	if v > math.MaxInt32 {
		d.fail(what + " out of range")
		return 0
	}
	return int(v)
}

func (d *findingsReader) bytes(what string) []byte {
	n := d.uvarint(what)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(what + " runs past the end")
		return nil
	}
	out := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return out
}

func (d *findingsReader) byte1(what string) byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail(what)
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *findingsReader) amount(what string) string {
	switch k := d.byte1(what); k {
	case 0:
		return ""
	case 1, 2:
		v := new(big.Int).SetBytes(d.bytes(what))
		if k == 2 {
			v.Neg(v)
		}
		return v.String()
	case 3:
		return string(d.bytes(what))
	default:
		d.fail(what + ": unknown kind")
		return ""
	}
}

func (d *findingsReader) str(what string) string {
	p := d.uvarint(what)
	if d.err != nil {
		return ""
	}
	if p >= uint64(len(d.tab)) {
		d.fail(what + ": no such string")
		return ""
	}
	return d.tab[p]
}

func (d *findingsReader) list(what string) int {
	n := d.count(what)
	if d.err == nil && n > len(d.b)-d.off {
		d.fail(what + " longer than the bytes left")
		return 0
	}
	return n
}

func (d *findingsReader) swaps(what string) []Swap {
	n := d.list(what)
	out := make([]Swap, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		s := Swap{Index: d.count(what + " index")}
		s.Tx, s.Pool, s.In, s.Out = d.str(what+" tx"), d.str(what+" pool"), d.str(what+" token in"), d.str(what+" token out")
		s.Sender, s.Bot = d.str(what+" sender"), d.str(what+" bot")
		s.AmountIn, s.AmountOut = d.amount(what+" amount in"), d.amount(what+" amount out")
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (d *findingsReader) ref(what string) Ref {
	return Ref{Index: d.count(what + " index"), Tx: d.str(what + " tx")}
}

// DecodeFindings reads the binary form of block n's findings: a Report
// without its Txs and Swaps (Swaps empty, Txs nil).
func DecodeFindings(n uint64, b []byte) (*Report, error) {
	d := &findingsReader{b: b}
	r := &Report{Block: n, Swaps: []Swap{}, Sandwiches: []Sandwich{}, Backruns: []Backrun{}}
	r.Count = d.count("count")
	nm := d.list("missing")
	prev := -1
	for i := 0; i < nm && d.err == nil; i++ {
		prev += d.count("missing index") + 1
		if prev > math.MaxInt32 {
			d.fail("missing index out of range")
		}
		r.Missing = append(r.Missing, prev)
	}
	r.Partial = d.byte1("flags")&1 != 0
	r.Builder.Payments, r.Builder.PriorityFees, r.Builder.Total = d.amount("builder payments"), d.amount("priority fees"), d.amount("builder total")
	r.Builder.Unknown = d.count("unknown costs")
	nt := d.list("strings")
	for i := 0; i < nt && d.err == nil; i++ {
		switch d.byte1("string kind") {
		case 0:
			d.tab = append(d.tab, "0x"+hex.EncodeToString(d.bytes("string")))
		case 1:
			d.tab = append(d.tab, string(d.bytes("string")))
		default:
			d.fail("string kind")
		}
	}
	ns := d.list("sandwiches")
	for i := 0; i < ns && d.err == nil; i++ {
		var s Sandwich
		s.Sender, s.Bot = d.str("sandwich sender"), d.str("sandwich bot")
		s.Front, s.Back = d.ref("sandwich front"), d.ref("sandwich back")
		np := d.list("sandwich pools")
		for j := 0; j < np && d.err == nil; j++ {
			s.Pools = append(s.Pools, d.str("sandwich pool"))
		}
		s.FrontSwaps, s.BackSwaps, s.Victims = d.swaps("front swap"), d.swaps("back swap"), d.swaps("victim")
		s.Token, s.Gain = d.str("sandwich token"), d.amount("sandwich gain")
		nl := d.list("sandwich left")
		for j := 0; j < nl && d.err == nil; j++ {
			if s.Left == nil {
				s.Left = map[string]string{}
			}
			k := d.str("left token")
			s.Left[k] = d.amount("left amount")
		}
		s.BuilderPaid, s.Costs, s.Net = d.amount("builder paid"), d.amount("costs"), d.amount("net")
		r.Sandwiches = append(r.Sandwiches, s)
	}
	nb := d.list("back-runs")
	for i := 0; i < nb && d.err == nil; i++ {
		var br Backrun
		br.Ref = d.ref("back-run")
		br.Sender, br.Bot, br.Token = d.str("back-run sender"), d.str("back-run bot"), d.str("back-run token")
		br.Gain = d.amount("back-run gain")
		br.Swaps, br.Corrects = d.swaps("back-run swap"), d.swaps("corrected swap")
		r.Backruns = append(r.Backruns, br)
	}
	if d.err == nil && d.off != len(b) {
		d.fail("bytes after the findings")
	}
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

// roleRank is the order of a transaction's roles in TxRow.Roles.
var roleRank = map[string]int{RoleFront: 0, RoleVictim: 1, RoleBack: 2, RoleBackrun: 3, RoleCorrected: 4}

func sortRoles(l []string) {
	sort.SliceStable(l, func(i, j int) bool { return roleRank[l[i]] < roleRank[l[j]] })
}

// Roles gives the roles each transaction plays in a report's findings,
// by index, in the order TxRow.Roles lists them.
func Roles(r *Report) map[int][]string {
	out := map[int][]string{}
	add := func(i int, role string) {
		for _, x := range out[i] {
			if x == role {
				return
			}
		}
		out[i] = append(out[i], role)
	}
	for _, s := range r.Sandwiches {
		add(s.Front.Index, RoleFront)
		add(s.Back.Index, RoleBack)
		for _, v := range s.Victims {
			add(v.Index, RoleVictim)
		}
	}
	for _, br := range r.Backruns {
		add(br.Index, RoleBackrun)
		for _, c := range br.Corrects {
			add(c.Index, RoleCorrected)
		}
	}
	for _, l := range out {
		sortRoles(l)
	}
	return out
}
