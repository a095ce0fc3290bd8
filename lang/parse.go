package lang

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Error is a query error at a position. Its message names what was wrong
// and, for syntax errors, what was expected; Error() prints the source line
// (a window of it around the column, when the line is long) with a caret
// under the column.
type Error struct {
	File  string
	Pos   Pos
	Msg   string
	line  string // the source line, or a window of it, for the caret
	caret int    // the caret's index in line, in runes
}

func (e *Error) Error() string {
	loc := e.Pos.String()
	if e.File != "" {
		loc = e.File + ":" + loc
	}
	s := loc + ": " + e.Msg
	if e.line != "" {
		rs := []rune(e.line)
		pad := strings.Map(func(r rune) rune {
			if r == '\t' {
				return '\t'
			}
			return ' '
		}, string(rs[:min(max(e.caret, 0), len(rs))]))
		s += "\n    " + e.line + "\n    " + pad + "^"
	}
	return s
}

// maxListed is how many errors ErrorList prints; it says how many more
// there are.
const maxListed = 10

// ErrorList is every error of a parse, in source order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	parts := make([]string, 0, min(len(l), maxListed+1))
	for i, e := range l {
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("(and %d more errors)", len(l)-maxListed))
			break
		}
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "\n")
}

// newError makes an Error at pos of src, with its source line.
func newError(file, src string, pos Pos, format string, args ...any) *Error {
	line, caret := snippet(src, pos)
	return &Error{File: file, Pos: pos, Msg: fmt.Sprintf(format, args...), line: line, caret: caret}
}

// An error prints its source line whole up to snipWhole runes; a longer
// one as a window of snipBefore runes before the column and snipAfter
// from it.
const (
	snipWhole  = 200
	snipBefore = 80
	snipAfter  = 80
)

// snippet is the line of src at pos, for a caret under pos: the whole
// line when it is short, else a window around pos with "…" where it was
// cut; and the caret's index in it. It reads a bounded number of bytes
// around pos.Offset, so that a thousand errors on a megabyte-long line
// cost no more than a thousand on a short one. When pos.Column is beyond
// the line's start in src (a text parsed at a position of a larger input,
// ParseAt), the line is padded with spaces to the column.
func snippet(src string, pos Pos) (string, int) {
	off := pos.Offset
	if off < 0 || off > len(src) {
		return "", 0
	}
	const span = 4 * snipWhole // bytes: runes are at most 4
	lo := max(0, off-span)
	cutStart := false
	ls := strings.LastIndexByte(src[lo:off], '\n')
	switch {
	case ls >= 0:
		ls += lo + 1
	case lo == 0:
		ls = 0
	default:
		ls, cutStart = lo, true
	}
	hi := min(len(src), off+span)
	cutEnd := false
	le := strings.IndexByte(src[off:hi], '\n')
	if le >= 0 {
		le += off
	} else {
		le, cutEnd = hi, hi < len(src)
	}
	for cutStart && ls < off && !utf8.RuneStart(src[ls]) { // a rune the window cut
		ls++
	}
	for cutEnd && le > off && !utf8.RuneStart(src[le]) {
		le--
	}
	before := []rune(src[ls:off])
	after := []rune(strings.TrimRight(src[off:le], "\r"))
	pad := 0 // columns before src's first line (ParseAt)
	if !cutStart && ls == 0 {
		pad = max(0, pos.Column-1-len(before))
	}
	if cutStart || cutEnd || pad+len(before)+len(after) > snipWhole {
		if pad+len(before) > snipBefore {
			cutStart = true
			if len(before) >= snipBefore {
				before, pad = before[len(before)-snipBefore:], 0
			} else {
				pad = snipBefore - len(before)
			}
		}
		if len(after) > snipAfter {
			after, cutEnd = after[:snipAfter], true
		}
	}
	var b strings.Builder
	caret := pad + len(before)
	if cutStart {
		b.WriteString("…")
		caret++
	}
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteString(string(before))
	b.WriteString(string(after))
	if cutEnd {
		b.WriteString("…")
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", 0
	}
	return b.String(), caret
}

var gName = regexp.MustCompile(`\bG([A-Z][A-Za-z]*)\b`)

// Grammar returns the query grammar in EBNF, as the parser builds it.
func Grammar() string { return gName.ReplaceAllString(parser.String(), "$1") }

// Parse parses a script of statements separated by ";" (a single statement
// needs none). file names the source in errors. Before anything is parsed,
// a linear scan checks each statement against MaxQueryBytes and
// MaxNesting; then each statement is parsed on its own, so that a script
// of any length parses in memory linear in its text.
func Parse(file, src string) ([]Statement, error) {
	return ParseAt(file, src, Pos{Line: 1, Column: 1})
}

// ParseAt is Parse for a text that starts at line at.Line, column
// at.Column of a larger input (a statement the REPL read): positions name
// the input's lines and columns, and offsets stay those of src.
func ParseAt(file, src string, at Pos) ([]Statement, error) {
	at.Offset = 0
	if at.Line < 1 {
		at.Line = 1
	}
	if at.Column < 1 {
		at.Column = 1
	}
	var out []Statement
	var errs ErrorList
	source := &Source{File: file, Text: src}
	sc := newScanner(file, src, at)
	for first := true; ; first = false {
		pc, ok, lerr := sc.next()
		if lerr != nil {
			errs = append(errs, lerr)
			break
		}
		if !ok {
			break
		}
		if !pc.HasCode {
			// only whitespace and comments: nothing to parse. Statements
			// are separated by ";": a script may not begin with one.
			if first && pc.HasSemi {
				errs = append(errs, newError(file, src, pc.Semi, "unexpected \";\""))
				break
			}
			continue
		}
		// Parsed from its first byte of code: the comments before it
		// could be of any length.
		p := &lowerer{file: file, src: src, source: source, base: pc.Code, text: src[pc.Code.Offset:pc.End], errs: errs}
		sts, ok := p.parse()
		errs = p.errs
		if !ok {
			break // a syntax error: what follows would be read out of step
		}
		out = append(out, sts...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// ParseOne parses exactly one statement.
func ParseOne(file, src string) (Statement, error) {
	sts, err := Parse(file, src)
	if err != nil {
		return nil, err
	}
	if len(sts) != 1 {
		return nil, ErrorList{newError(file, src, Pos{Line: 1, Column: 1}, "want one statement, found %d", len(sts))}
	}
	return sts[0], nil
}

// lowerer parses and lowers one statement of a script: text, which starts
// at base in src.
type lowerer struct {
	file   string
	src    string
	source *Source
	base   Pos
	text   string
	errs   ErrorList
}

// parse lexes, parses and lowers the statement; false after a lexical or
// syntax error (recorded).
func (p *lowerer) parse() ([]Statement, bool) {
	if !p.lexCheck() {
		return nil, false
	}
	prog, err := parser.ParseString(p.file, p.text)
	if err != nil {
		p.syntaxError(err)
		return nil, false
	}
	var out []Statement
	for _, s := range prog.Stmts {
		n := len(p.errs)
		st := p.statement(s)
		if st == nil {
			continue
		}
		// The check pass, then this statement's errors in source order.
		p.errs = append(p.errs, Check(st)...)
		slices.SortStableFunc(p.errs[n:], func(a, b *Error) int { return a.Pos.Offset - b.Pos.Offset })
		out = append(out, st)
	}
	return out, true
}

func (p *lowerer) errorAt(pos Pos, format string, args ...any) {
	p.errs = append(p.errs, newError(p.file, p.src, pos, format, args...))
}

// conv turns a position in the statement's text into one in the input.
func (p *lowerer) conv(lp lexer.Position) Pos {
	pos := Pos{Offset: p.base.Offset + lp.Offset, Line: p.base.Line + lp.Line - 1, Column: lp.Column}
	if lp.Line == 1 {
		pos.Column += p.base.Column - 1
	}
	return pos
}

func (p *lowerer) span(from, to lexer.Position) Span { return Span{From: p.conv(from), To: p.conv(to)} }

// clip cuts a word of the input for a message when it is long.
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// lexCheck reports what the lexer can see: characters no token starts
// with, unterminated strings, hex that is neither an address nor a hash.
// It reads the tokens one at a time.
func (p *lowerer) lexCheck() bool {
	lex, err := queryLexer.LexString(p.file, p.text)
	if err != nil {
		p.errorAt(p.base, "%v", err)
		return false
	}
	sym := queryLexer.Symbols()
	n := len(p.errs)
	for {
		t, err := lex.Next()
		if err != nil {
			var pe participle.Error
			if errors.As(err, &pe) {
				pos := p.conv(pe.Position())
				r, _ := utf8.DecodeRuneInString(p.src[min(pos.Offset, len(p.src)):])
				p.errorAt(pos, "unexpected character %q: not part of any word, number, address or operator", r)
				return false
			}
			p.errorAt(p.base, "%v", err)
			return false
		}
		if t.EOF() {
			break
		}
		switch t.Type {
		case sym["String"]:
			if len(t.Value) < 2 || !strings.HasSuffix(t.Value, `"`) {
				p.errorAt(p.conv(t.Pos), "unterminated string: add the closing \"")
			} else {
				p.errorAt(p.conv(t.Pos), "strings are not part of the language: write names without quotes")
			}
		case sym["BadHex"]:
			p.errorAt(p.conv(t.Pos), "%s is neither an address (0x and 40 hex digits) nor a transaction or structural hash (0x and 64), nor a prefix of one (at least %d hex digits)", clip(t.Value), MinPrefixDigits)
		}
	}
	return len(p.errs) == n
}

// syntaxError turns participle's error into a positioned Error that says
// what was found and what was expected.
func (p *lowerer) syntaxError(err error) {
	var ute *participle.UnexpectedTokenError
	if errors.As(err, &ute) {
		found := fmt.Sprintf("%q", clip(ute.Unexpected.Value))
		if ute.Unexpected.EOF() {
			found = "the end of the query"
		}
		if w, ok := p.unknownWord(ute.Position().Offset); ok {
			p.errorAt(p.conv(w.Pos), "%s", w.msg)
			return
		}
		msg := "unexpected " + found
		kws := strings.Split(keywords, "|")
		if k := closest(strings.ToLower(ute.Unexpected.Value), kws); !ute.Unexpected.EOF() && k != "" && k != strings.ToLower(ute.Unexpected.Value) {
			msg += fmt.Sprintf(" (did you mean %q?)", k)
		} else if prev, _ := p.tokensBefore(ute.Position().Offset); prev != nil && prev.Type == parser.Lexer().Symbols()["Ident"] {
			// a misspelt keyword read as a token symbol ("pools > 3 limt 2")
			if k := closest(strings.ToLower(prev.Value), kws); k != "" {
				msg += fmt.Sprintf(" after %q (did you mean %q?)", clip(prev.Value), k)
			}
		}
		if ute.Expect != "" || strings.Contains(ute.Message(), "expected") {
			if i := strings.Index(ute.Message(), "(expected "); i >= 0 {
				msg += ": expected " + strings.TrimSuffix(ute.Message()[i+len("(expected "):], ")")
			}
		}
		p.errorAt(p.conv(ute.Position()), "%s", gName.ReplaceAllString(msg, "$1"))
		return
	}
	var pe participle.Error
	if errors.As(err, &pe) {
		p.errorAt(p.conv(pe.Position()), "%s", gName.ReplaceAllString(pe.Message(), "$1"))
		return
	}
	p.errorAt(p.base, "%v", err)
}

type wordErr struct {
	Pos lexer.Position
	msg string
}

// unknownWord explains a syntax error right after an identifier that is
// no word of the language where a condition starts ("prfit > 1 WETH"):
// the parser only says it expected "= HASH" (the one condition that
// starts with a free word), which misleads.
func (p *lowerer) unknownWord(offset int) (wordErr, bool) {
	sym := parser.Lexer().Symbols()
	prev, prev2 := p.tokensBefore(offset)
	if prev == nil || prev.Type != sym["Ident"] || oneOf(strings.ToLower(prev.Value), Vocab.Words(ClassLevel, Anywhere)) {
		return wordErr{}, false
	}
	if prev2 == nil || !(prev2.Type == sym["Keyword"] && oneOf(strings.ToLower(prev2.Value), []string{"where", "with", "and", "or", "not"}) || prev2.Value == "(") {
		return wordErr{}, false
	}
	msg := fmt.Sprintf("unknown word %q where a condition starts", clip(prev.Value))
	if s := closest(strings.ToLower(prev.Value), Vocab.Words(ClassCondition, Anywhere)); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		msg += ": want profit, pools, hops, cycles, leftovers, block, verdict, tier, path, mode, reason, bot, sender, touches, flashloan or a level = HASH"
	}
	return wordErr{Pos: prev.Pos, msg: msg}, true
}

// tokensBefore returns the two tokens before offset (the nearest first),
// comments and spaces skipped.
func (p *lowerer) tokensBefore(offset int) (prev, prev2 *lexer.Token) {
	toks, err := parser.Lex(p.file, strings.NewReader(p.text))
	if err != nil {
		return nil, nil
	}
	sym := parser.Lexer().Symbols()
	for i := range toks {
		t := &toks[i]
		if t.Type == sym["Whitespace"] || t.Type == sym["Comment"] {
			continue
		}
		if t.Pos.Offset >= offset {
			break
		}
		prev2, prev = prev, t
	}
	return prev, prev2
}

// closest is the word of set nearest w: within one edit for short words,
// two for longer ones.
func closest(w string, set []string) string {
	if len(w) > 24 { // no word of the language is within two edits
		return ""
	}
	best, bd := "", 2
	if len(w) > 4 {
		bd = 3
	}
	for _, s := range set {
		if d := editDistance(w, s); d < bd {
			best, bd = s, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			next := min(row[j]+1, row[j-1]+1, diag+cost)
			diag, row[j] = row[j], next
		}
	}
	return row[len(rb)]
}

// --- lowering -----------------------------------------------------------

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

// ident lowers a name; the check pass resolves it.
func (p *lowerer) ident(g *gIdent) *Ident {
	if g == nil {
		return nil
	}
	return &Ident{Span: p.span(g.Pos, g.EndPos), Name: strings.ToLower(g.Name)}
}

// word resolves a word the grammar admits in a place (a keyword of a
// class): the vocabulary declares every one.
func word[T any](class Class, w string) T {
	d, ok := Vocab.Lookup(class, w)
	if !ok {
		panic(fmt.Sprintf("lang: the grammar admits %s %q, which the vocabulary does not declare", class, w))
	}
	return d.Value.(T)
}

func (p *lowerer) num(g *gNum) *NumLit {
	if g == nil {
		return nil
	}
	text := g.Text
	if i := slices.Index(strings.Split(numWords, "|"), strings.ToLower(text)); i >= 0 {
		text = strconv.Itoa(i)
	}
	return &NumLit{Span: p.span(g.Pos, g.EndPos), Text: text}
}

func (p *lowerer) integer(g *gNum, what string) *NumLit {
	n := p.num(g)
	if n != nil && strings.Contains(n.Text, ".") {
		p.errorAt(n.From, "%s must be a whole number, not %s", what, clip(n.Text))
	}
	return n
}

func (p *lowerer) limit(g *gLimit) *Limit {
	if g == nil {
		return nil
	}
	n := p.integer(g.N, "a limit")
	if n != nil && strings.Trim(n.Text, "0") == "" {
		p.errorAt(n.From, "a limit must be at least 1")
	}
	return &Limit{Span: p.span(g.Pos, g.EndPos), N: n}
}

func (p *lowerer) token(g *gToken) *TokenRef {
	if g == nil {
		return nil
	}
	t := &TokenRef{Span: p.span(g.Pos, g.EndPos), Symbol: strings.ToUpper(g.Symbol)}
	if g.Address != "" {
		t.Address, t.Part = hexRef(g.Address, 40, true)
	}
	return t
}

func (p *lowerer) metric(g *gMetric) *Metric {
	m := &Metric{Span: p.span(g.Pos, g.EndPos), Token: p.token(g.Token)}
	switch name := strings.ToLower(g.Profit + g.Count); name {
	case "profit": // plain "profit" is the net one
		m.Kind = MetricNet
	default:
		m.Kind = word[MetricKind](ClassMetric, name)
	}
	return m
}

func (p *lowerer) order(g *gOrder) *Order {
	if g == nil {
		return nil
	}
	return &Order{Span: p.span(g.Pos, g.EndPos), Metric: p.metric(g.Metric), Desc: strings.EqualFold(g.Dir, "desc")}
}

func (p *lowerer) rng(g *gRange) *BlockRange {
	if g == nil {
		return nil
	}
	r := &BlockRange{Span: p.span(g.Pos, g.EndPos), From: p.integer(g.From, "a block"), To: p.integer(g.To, "a block")}
	p.checkRange(r)
	return r
}

func (p *lowerer) checkRange(r *BlockRange) {
	if r.From != nil && r.To != nil && len(r.From.Text) > 0 && len(r.To.Text) > 0 {
		if cmpNum(r.From.Text, r.To.Text) > 0 {
			p.errorAt(r.From.From, "empty block range: %s is after %s", clip(r.From.Text), clip(r.To.Text))
		}
	}
}

// cmpNum compares two non-negative integers written in decimal.
func cmpNum(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func (p *lowerer) stmt(from, to lexer.Position) Stmt {
	return Stmt{Span: p.span(from, to), Src: p.source}
}

func (p *lowerer) statement(g *gStatement) Statement {
	var st Statement
	switch {
	case g.Find != nil:
		f := g.Find
		t := TargetTransactions
		if f.Kind != "" {
			t = word[Target](ClassFindTarget, f.Kind)
		}
		if t.Findings() {
			st = &Findings{Stmt: p.stmt(f.Pos, f.EndPos), Kind: t, Where: p.expr(f.Where), Order: p.order(f.Order), Limit: p.limit(f.Limit)}
			break
		}
		st = &Find{Stmt: p.stmt(f.Pos, f.EndPos), Target: t, Where: p.expr(f.Where), Order: p.order(f.Order), Limit: p.limit(f.Limit)}
	case g.Same != nil:
		s := g.Same
		st = &Same{Stmt: p.stmt(s.Pos, s.EndPos), A: p.tx(s.A), B: p.tx(s.B), Level: p.ident(s.Level)}
	case g.Match != nil:
		m := g.Match
		st = &Match{Stmt: p.stmt(m.Pos, m.EndPos), Ref: p.tx(m.Ref), Level: p.ident(m.Level), Where: p.expr(m.Where), Order: p.order(m.Order), Limit: p.limit(m.Limit)}
	case g.Anom != nil:
		a := g.Anom
		st = &Anomalies{Stmt: p.stmt(a.Pos, a.EndPos), Bot: p.addr(a.Bot), Since: p.integer(a.Since, "a block"), Baseline: p.rng(a.Baseline), Limit: p.limit(a.Limit)}
	case g.Count != nil:
		c := g.Count
		what := TargetTransactions
		if c.What != "" {
			what = word[Target](ClassCountWhat, c.What)
		}
		st = &Count{Stmt: p.stmt(c.Pos, c.EndPos), What: what, By: p.ident(c.By), Where: p.expr(c.Where), Limit: p.limit(c.Limit)}
	case g.Show != nil && g.Show.Block != nil:
		s := g.Show
		st = &ShowBlock{Stmt: p.stmt(s.Pos, s.EndPos), Block: p.integer(s.Block, "a block")}
	case g.Show != nil:
		s := g.Show
		sh := &Show{Stmt: p.stmt(s.Pos, s.EndPos), Tx: p.tx(s.Tx)}
		for _, v := range s.Views {
			sh.Views = append(sh.Views, p.ident(v))
		}
		st = sh
	}
	if st == nil {
		return nil
	}
	if g.Explain {
		return &Explain{Stmt: p.stmt(g.Pos, g.EndPos), Query: st}
	}
	return st
}

func (p *lowerer) tx(g *gTx) *TxRef {
	if g == nil {
		return nil
	}
	t := &TxRef{Span: p.span(g.Pos, g.EndPos)}
	t.Hash, t.Part = hexRef(g.Hash, 64, false)
	return t
}

func (p *lowerer) addr(g *gAddr) *AddrLit {
	if g == nil {
		return nil
	}
	a := &AddrLit{Span: p.span(g.Pos, g.EndPos)}
	a.Addr, a.Part = hexRef(g.Addr, 40, true)
	return a
}

// hexRef reads a hex literal of a reference whose whole value has width
// digits: the value, lowercase, when it is whole (or, for an address,
// 0x0: the null address), else the shortened form's digits.
func hexRef(text string, width int, addr bool) (string, Partial) {
	text = strings.ToLower(text)
	digits := text[min(2, len(text)):]
	if pre, suf, ok := strings.Cut(digits, "…"); ok {
		return "", Partial{Prefix: pre, Suffix: suf}
	}
	if pre, suf, ok := strings.Cut(digits, "..."); ok {
		return "", Partial{Prefix: pre, Suffix: suf}
	}
	switch {
	case len(digits) == width:
		return text, Partial{}
	case addr && digits == "0":
		return "0x" + strings.Repeat("0", width), Partial{}
	}
	return "", Partial{Prefix: digits}
}

func (p *lowerer) hash(g *gHash) *HashLit {
	h := &HashLit{Span: p.span(g.Pos, g.EndPos)}
	h.Hash, h.Part = hexRef(g.Hash, 64, false)
	return h
}

func (p *lowerer) expr(g *gExpr) Expr {
	if g == nil {
		return nil
	}
	e := p.and(g.Left)
	for _, r := range g.Right {
		right := p.and(r)
		e = &Or{Span: Span{From: e.Pos(), To: right.End()}, L: e, R: right}
	}
	return e
}

func (p *lowerer) and(g *gAnd) Expr {
	e := p.unary(g.Left)
	for _, r := range g.Right {
		right := p.unary(r)
		e = &And{Span: Span{From: e.Pos(), To: right.End()}, L: e, R: right}
	}
	return e
}

func (p *lowerer) unary(g *gUnary) Expr {
	var e Expr
	if g.Group != nil {
		e = p.expr(g.Group)
	} else {
		e = p.pred(g.Pred)
	}
	if g.Not {
		return &Not{Span: p.span(g.Pos, g.EndPos), X: e}
	}
	return e
}

func (p *lowerer) pred(g *gPred) Expr {
	sp := p.span(g.Pos, g.EndPos)
	switch {
	case g.Compare != nil:
		if strings.EqualFold(g.Compare.Metric.Count, "block") {
			c := g.Compare
			if c.Value.Token != nil {
				p.errorAt(p.conv(c.Value.Token.Pos), "a block is a number, not an amount of %s", p.token(c.Value.Token))
			}
			return &InBlocks{Span: sp, Range: &BlockRange{Span: sp, Op: c.Op.op(), From: p.integer(c.Value.Number, "a block")}}
		}
		return p.compare(g.Compare)
	case g.Is != nil:
		return &Is{Span: sp, Field: word[Field](ClassCondition, g.Is.Field), Neg: g.Is.Op == "!=", Value: p.ident(g.Is.Value)}
	case g.Reason != nil:
		return &HasReason{Span: sp, Reason: p.ident(g.Reason)}
	case g.Blocks != nil:
		b := g.Blocks
		var r *BlockRange
		switch {
		case b.Range != nil:
			r = p.rng(b.Range)
		case b.From != nil:
			r = &BlockRange{Span: p.span(b.Pos, b.EndPos), From: p.integer(b.From, "a block"), To: p.integer(b.To, "a block")}
			p.checkRange(r)
		default:
			op, _ := ParseOp(b.Op)
			r = &BlockRange{Span: p.span(b.Pos, b.EndPos), Op: op, From: p.integer(b.N, "a block")}
		}
		return &InBlocks{Span: sp, Range: r}
	case g.AddrIs != nil:
		return &AddrIs{Span: sp, Field: strings.ToLower(g.AddrIs.Field), Neg: g.AddrIs.Op == "!=", Addr: p.addr(g.AddrIs.Addr)}
	case g.Touches != nil:
		return &Touches{Span: sp, Target: p.token(g.Touches)}
	case g.Flash:
		return &FlashLoan{Span: sp}
	case g.Through != nil:
		t := g.Through
		m := &Metric{Span: p.span(t.N.EndPos, t.EndPos), Kind: word[MetricKind](ClassMetric, t.What)}
		v := &Amount{Span: p.span(t.N.Pos, t.N.EndPos), Number: p.num(t.N)}
		if strings.Contains(v.Number.Text, ".") {
			p.errorAt(v.Number.From, "%s is a count: compare it with a whole number, not %s", m.Kind, clip(v.Number.Text))
		}
		return &Compare{Span: sp, Metric: m, Op: t.Op.op(), Value: v}
	case g.HashIs != nil:
		return &HashIs{Span: sp, Level: p.ident(g.HashIs.Level), Hash: p.hash(g.HashIs.Hash)}
	}
	return nil
}

// compare lowers METRIC OP VALUE and checks its types: counts compare
// with whole numbers, profits with amounts of a named token.
func (p *lowerer) compare(g *gCompare) Expr {
	m := p.metric(g.Metric)
	v := &Amount{Span: p.span(g.Value.Pos, g.Value.EndPos), Number: p.num(g.Value.Number), Token: p.token(g.Value.Token)}
	op := g.Op.op()
	c := &Compare{Span: p.span(g.Pos, g.EndPos), Metric: m, Op: op, Value: v}
	switch {
	case !m.IsProfit():
		if v.Token != nil {
			p.errorAt(v.Token.From, "%s is a count: compare it with a whole number, not an amount of %s", m.Kind, v.Token)
		} else if strings.Contains(v.Number.Text, ".") {
			p.errorAt(v.Number.From, "%s is a count: compare it with a whole number, not %s", m.Kind, clip(v.Number.Text))
		}
	case m.Token == nil && v.Token == nil:
		p.errorAt(v.Number.To, "missing token: say which token the profit is in (%s profit > %s WETH, or %s profit in 0x… > %s in base units)", m.Kind, clip(v.Number.Text), m.Kind, clip(v.Number.Text))
	case m.Token != nil && v.Token != nil && !strings.EqualFold(m.Token.String(), v.Token.String()):
		p.errorAt(v.Token.From, "the profit is in %s but the amount is in %s", m.Token, v.Token)
	}
	return c
}

// Errorf makes a positioned error about src, for the layers after the
// parser (unknown token symbols, unknown transactions): it prints like a
// syntax error, with the line and a caret.
func Errorf(file, src string, pos Pos, format string, args ...any) *Error {
	return newError(file, src, pos, format, args...)
}
