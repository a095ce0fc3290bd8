package repl

import (
	"context"
	"fmt"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/planner"
)

// implicitOrder says in what order the rows of a find, match or find
// sandwiches|backruns without "order by" come: the order of the index
// keys its access path reads (index/keys.go). It is "" for the other
// statements, and when the statement orders its rows itself.
func implicitOrder(q *planner.Query) string {
	switch q.Kind {
	case lang.StmtFind, lang.StmtMatch, lang.StmtFindings:
	default:
		return ""
	}
	var leaf planner.Plan
	var walk func(p planner.Plan) bool // false: the plan sorts
	walk = func(p planner.Plan) bool {
		switch p.(type) {
		case *planner.Sort, *planner.FindingsSort, *planner.Group:
			return false
		}
		in := p.Inputs()
		if len(in) == 0 {
			leaf = p
			return true
		}
		return walk(in[len(in)-1]) // MatchRef: the lookup after the reference
	}
	if q.Plan == nil || !walk(q.Plan) {
		return ""
	}
	const position = "in index order: by block, then position in the block"
	switch p := leaf.(type) {
	case *planner.BotScan:
		return "in index order: by shape (in the order the index first stored each), then block and position"
	case *planner.TierScan:
		if p.Tier == nil {
			return "in index order: by tier, then block and position"
		}
		return position
	case *planner.ProfitRange:
		return "in index order: by profit, lowest first"
	case planner.FindingsScan:
		return "in block order"
	case planner.TxLookup:
		return ""
	}
	return position
}

// orderLine is the line that states an implicit order, for explain and
// under a table: "" when the order was asked for.
func orderLine(q *planner.Query) string {
	o := implicitOrder(q)
	if o == "" {
		return ""
	}
	return "(rows " + o + "; order by METRIC chooses another)"
}

// afterRows prints the notes under a statement's rows, in the table-like
// modes: the implicit order of a find (Session.OrderNote) when it
// returned more than one row, and an anomalies' empty baseline.
func (s *Session) afterRows(ctx context.Context, q *planner.Query, n int) {
	if !isTableMode(s.Mode) {
		return
	}
	if s.OrderNote && n > 1 {
		if o := orderLine(q); o != "" {
			fmt.Fprintln(s.Out, o)
		}
	}
	if note := s.baselineNote(ctx, q.Stmt); note != "" {
		fmt.Fprintln(s.Out, note)
	}
}

// baselineNote is the line under the rows of "anomalies … baseline
// blocks A..B" when the bot has no transaction in A..B: every shape of
// the bot is then new, and the rows say little. It counts through the
// planner, as a statement would. "" otherwise.
func (s *Session) baselineNote(ctx context.Context, st lang.Statement) string {
	a, ok := st.(*lang.Anomalies)
	if !ok || a.Baseline == nil || s.Src == nil || a.Bot == nil {
		return ""
	}
	src := st.Source()
	if src == nil {
		return ""
	}
	bot, from, to := src.TextOf(a.Bot), src.TextOf(a.Baseline.From), src.TextOf(a.Baseline.To)
	if bot == "" || from == "" || to == "" {
		return ""
	}
	sts, err := lang.Parse("", fmt.Sprintf("count transactions by bot where bot = %s and block between %s and %s", bot, from, to))
	if err != nil || len(sts) != 1 {
		return ""
	}
	q, err := (&planner.Planner{Cfg: s.Cfg, Src: s.Src}).Build(sts[0])
	if err != nil {
		return ""
	}
	n := 0
	x := &planner.Executor{Src: s.Src, Cfg: s.Cfg}
	if err := x.Run(ctx, q, func(planner.Row) error { n++; return nil }); err != nil || n > 0 {
		return ""
	}
	return fmt.Sprintf("(the baseline, blocks %s..%s, holds no transaction of bot %s: every one of its shapes counts as new)", from, to, bot)
}
