package planner

import (
	"encoding/hex"
	"strconv"
	"unsafe"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// rowFormatter builds find's rows (recordRow) for one query: each row's
// texts are appended to one buffer and become one string, its fields
// slices of it (one allocation for the texts of a row, not one a text),
// and what a token's texts need (its key, symbol and decimals, its unit)
// is looked up once a query, not once an amount. The texts are those of
// Token.Key, Signed.String, Config.FormatSigned and show.FormatGross
// (FormatDelta of Config.Fold, then of the entries), byte
// for byte (TestRowFormatterAmounts, TestRecordRowSame).
type rowFormatter struct {
	cfg    *normalform.Config
	toks   map[normalform.Token]*tokenText
	buf    []byte           // a formatter's first row (start)
	digits []byte           // a folded amount's decimal digits
	delta  normalform.Delta // a balance to fold
	folded normalform.Delta // its fold's array (Config.FoldInto)
	fields []Field          // rows' fields, allocated fieldRows rows at a time
	lend   bool             // Executor.LendRows: every row is formatted into fields' first rowFields
	texts  []byte           // the block rows' texts are written into (start, text); bytes before len are strings already; nil before the first row
	recent [4]*tokenText
}

// tokenText is what a token's amounts are written with.
type tokenText struct {
	tok  normalform.Token
	key  string           // Token.Key: the machine form's prefix
	unit normalform.Token // Config.Unit: ETH and WETH are one
	// plain: a fungible or native token, written as FormatAmount writes
	// it: its amount with decimals (when known) and then suffix (" "
	// and its symbol, or its short address). Others (NFTs) go through
	// Config.FormatSigned.
	plain    bool
	decimals uint8
	suffix   string
}

func newRowFormatter(cfg *normalform.Config) *rowFormatter {
	return &rowFormatter{cfg: cfg, toks: map[normalform.Token]*tokenText{}, buf: make([]byte, 0, 512)}
}

func (f *rowFormatter) token(t normalform.Token) *tokenText {
	for _, tt := range f.recent { // a row's tokens are mostly the row before's
		if tt != nil && tt.tok == t {
			return tt
		}
	}
	tt := f.lookup(t)
	copy(f.recent[1:], f.recent[:])
	f.recent[0] = tt
	return tt
}

func (f *rowFormatter) lookup(t normalform.Token) *tokenText {
	if tt, ok := f.toks[t]; ok {
		return tt
	}
	tt := &tokenText{tok: t, key: t.Key(), unit: f.cfg.Unit(t)}
	if t.Kind == normalform.Native || t.Kind == normalform.Fungible {
		tt.plain = true
		if ti, ok := f.cfg.TokenInfo(t); ok {
			tt.decimals, tt.suffix = ti.Decimals, " "+ti.Symbol
		} else {
			tt.suffix = " " + f.cfg.Short(t.Addr)
		}
	}
	if len(f.toks) < 1<<16 { // bounded: a scan of a million rows in as many tokens
		f.toks[t] = tt
	}
	return tt
}

// appendUnits appends normalform.FormatUnits of the amount whose decimal
// digits are digits (they may be earlier bytes of b): the exact decimal,
// trailing zeros of the fraction trimmed.
func appendUnits(b, digits []byte, decimals uint8) []byte {
	d := int(decimals)
	if n := len(digits); d > 0 && n <= d { // pad to one integer digit
		for range d - n + 1 {
			b = append(b, '0')
		}
	}
	b = append(b, digits...)
	if d == 0 {
		return b
	}
	point := len(b) - d
	end := len(b)
	for end > point && b[end-1] == '0' {
		end--
	}
	if end == point {
		return b[:point]
	}
	b = append(b[:end], 0) // room for the point
	copy(b[point+1:], b[point:end])
	b[point] = '.'
	return b
}

// appendSigned appends Config.FormatSigned(s, t); digits are s's
// decimal digits.
func (f *rowFormatter) appendSigned(b []byte, s *normalform.Signed, digits []byte, t normalform.Token, tt *tokenText) []byte {
	if !tt.plain {
		return append(b, f.cfg.FormatSigned(*s, t)...)
	}
	switch {
	case s.Abs.IsZero():
	case s.Neg:
		b = append(b, '-')
	default:
		b = append(b, '+')
	}
	b = appendUnits(b, digits, tt.decimals) // an unknown token has no decimals: its base units
	return append(b, tt.suffix...)
}

// appendAmounts appends a balance's machine form (token:amount pairs in
// base units joined by ';') and then its human form (show.FormatGross;
// "0" when empty, "unknown" when not known), and returns the offset where
// the human form starts.
func (f *rowFormatter) appendAmounts(b []byte, as []layout.Amount, known bool) ([]byte, int) {
	if human := len(b); !known {
		return append(b, "unknown"...), human
	} else if len(as) == 0 {
		return append(b, '0'), human
	}
	var small [4]*tokenText
	var smallSpans [4][2]int
	tts, spans := small[:0], smallSpans[:0] // each entry's token, and its digits in the machine form
	for i := range as {
		a := &as[i]
		tt := f.token(a.Token)
		tts = append(tts, tt)
		if i > 0 {
			b = append(b, ';')
		}
		b = append(b, tt.key...)
		b = append(b, ':')
		if a.Amount.Neg && !a.Amount.Abs.IsZero() {
			b = append(b, '-')
		}
		ds := len(b)
		b = normalform.AppendDec(b, &a.Amount.Abs)
		spans = append(spans, [2]int{ds, len(b)})
	}
	human := len(b)
	// Two entries of one unit (ETH and WETH): FormatGross writes the
	// folded balance (Config.Fold) and then the entries in parentheses.
	for i := range tts {
		for j := i + 1; j < len(tts); j++ {
			if tts[i].unit == tts[j].unit {
				d := f.delta[:0]
				for _, a := range as {
					d = append(d, normalform.DeltaEntry{Token: a.Token, Amount: a.Amount})
				}
				f.delta = d
				folded, err := f.cfg.FoldInto(f.folded, d)
				if cap(folded) > 0 {
					f.folded = folded[:0]
				}
				if err != nil { // FormatGross writes the entries alone
					return f.appendDelta(b, as, tts, spans), human
				}
				if len(folded) == 0 {
					b = append(b, '0')
				}
				for k := range folded {
					if k > 0 {
						b = append(b, ", "...)
					}
					f.digits = normalform.AppendDec(f.digits[:0], &folded[k].Amount.Abs)
					b = f.appendSigned(b, &folded[k].Amount, f.digits, folded[k].Token, f.token(folded[k].Token))
				}
				b = append(b, " ("...)
				return append(f.appendDelta(b, as, tts, spans), ')'), human
			}
		}
	}
	return f.appendDelta(b, as, tts, spans), human
}

// appendDelta appends show.FormatDelta of a balance's entries (not empty).
// spans are their digits' offsets in b.
func (f *rowFormatter) appendDelta(b []byte, as []layout.Amount, tts []*tokenText, spans [][2]int) []byte {
	for i := range as {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = f.appendSigned(b, &as[i].Amount, b[spans[i][0]:spans[i][1]], as[i].Token, tts[i])
	}
	return b
}

// row is a transaction's row in find, match and anomalies results.
func (f *rowFormatter) row(r *layout.Record) Row {
	b := f.start()
	b = append(b, "0x"...)
	b = hex.AppendEncode(b, r.Hash[:])
	txEnd := len(b)
	if r.Loc.Block != layout.UnknownBlock {
		b = strconv.AppendUint(b, r.Loc.Block, 10)
	}
	blockEnd := len(b)
	gs := len(b)
	b, gh := f.appendAmounts(b, r.Gross, true)
	ge := len(b)
	ns := len(b)
	b, nh := f.appendAmounts(b, r.Net, r.CostsKnown)
	ne := len(b)
	// reasons: joined by ',' for machines, ", " for people
	rs := len(b)
	for i, y := range r.Reasons {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, y...)
	}
	rm := len(b)
	for i, y := range r.Reasons {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, y...)
	}
	rh := len(b)
	// the bot as addrField writes it: normalform.AddrKey and ShortAddr (the
	// 4+4 form ShortenAddresses recognises and widens)
	bs := len(b)
	b = append(b, "0x"...)
	b = hex.AppendEncode(b, r.Recipient[:])
	bm := len(b)
	b = append(b, b[bs:bs+6]...)
	b = append(b, "…"...)
	b = append(b, b[bm-4:bm]...)
	bh := len(b)
	s := f.text(b)
	tx := s[:txEnd]
	block := s[txEnd:blockEnd]
	reasons, reasonsH := s[rs:rm], s[rm:rh]
	if len(r.Reasons) == 1 {
		reasonsH = reasons
	}
	c := r.Counts
	verdict, tier, path := r.Verdict.String(), r.Tier.String(), r.Path.String()
	cycles, pools, hops, left := smallNum(c.Cycles), smallNum(c.Pools), smallNum(c.Hops), smallNum(c.Leftovers)
	if len(f.fields) < rowFields {
		n := rowFields * fieldRows
		if f.lend {
			n = rowFields
		}
		f.fields = make([]Field, n)
	}
	row := Row(f.fields[:rowFields:rowFields]) // full: an append to the row copies it
	if !f.lend {
		f.fields = f.fields[rowFields:]
	}
	// Field by field into the slab (not a composite copied in: a typed
	// copy with the collector's barrier over the whole row).
	row[0] = Field{"tx", tx, tx}
	row[1] = Field{"block", block, block}
	row[2] = Field{"verdict", verdict, verdict}
	row[3] = Field{"tier", tier, tier}
	row[4] = Field{"path", path, path}
	row[5] = Field{"gross", s[gs:gh], s[gh:ge]}
	row[6] = Field{"net", s[ns:nh], s[nh:ne]}
	row[7] = Field{"cycles", cycles, cycles}
	row[8] = Field{"pools", pools, pools}
	row[9] = Field{"hops", hops, hops}
	row[10] = Field{"leftovers", left, left}
	row[11] = Field{"bot", s[bs:bm], s[bm:bh]}
	row[12] = Field{"reasons", reasons, reasonsH}
	return row
}

// textBlock is the size of the blocks rows' texts are written into.
const textBlock = 32 << 10

// textRoom is the room a block must have left for a row to be written
// into it: rows' texts are a few hundred bytes (one of two balances of
// four amounts: ~700).
const textRoom = 1 << 10

// start returns the slice a row's texts are appended to and text makes
// a string of: the free tail of the current block of texts, so that a
// row is written in place and not copied, or the formatter's buffer for
// its first row (recordRow's only one, maybe: no block for it).
// Rows' texts lie one after another in shared blocks of textBlock
// bytes, never written again once returned: one allocation for about a
// hundred rows instead of one a row. A row kept holds its block.
func (f *rowFormatter) start() []byte {
	if f.texts == nil {
		f.texts = []byte{} // the next row's block is allocated
		return f.buf[:0]
	}
	if cap(f.texts)-len(f.texts) < textRoom {
		f.texts = make([]byte, 0, textBlock)
	}
	return f.texts[len(f.texts):len(f.texts)]
}

// text returns b, which start gave (and appends grew), as a string: in
// place when b is still in the block's tail (the block now ends after
// it); a copy when b is the first row's buffer; else b's own array (a
// row longer than the room it was given, which append moved, and which
// nothing else holds).
func (f *rowFormatter) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if tail := f.texts[len(f.texts):cap(f.texts)]; cap(tail) >= len(b) && unsafe.SliceData(tail) == unsafe.SliceData(b) {
		f.texts = f.texts[:len(f.texts)+len(b)]
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	if unsafe.SliceData(b) == unsafe.SliceData(f.buf) {
		return string(b)
	}
	return unsafe.String(unsafe.SliceData(b), len(b)) // append's array, this row's alone
}

// rowFields is the number of fields of find's rows.
const rowFields = 13

// fieldRows is the rows whose fields are allocated at once: 43 rows of
// 13 fields are 26,832 bytes, a small object (64 rows, 39,936 bytes,
// were a large one: the heap's slow path every 64 rows).
const fieldRows = 43
