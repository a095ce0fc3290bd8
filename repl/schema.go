package repl

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/flowq/flowq/lang"
)

// .schema: the fields a query's conditions can test, each with the type
// of what it is compared with, read from the language's vocabulary
// (lang.Vocab): a field's type is what the vocabulary declares the word
// to be elsewhere too (a metric, a level, a field over a class of
// words, a grouping by an address).
func (r *REPL) schema(_ context.Context, _ []string, _ string) error {
	tw := tabwriter.NewWriter(r.sess.Out, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "field\ttype\texample\twhere\n")
	for _, d := range lang.Vocab.Decls(lang.ClassCondition) {
		if d.Alias {
			continue
		}
		where := "transactions"
		switch d.Places {
		case lang.InFindings:
			where = "block findings"
		case lang.Anywhere:
			where = "transactions, block findings"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Word, fieldType(d), d.Help, where)
	}
	fmt.Fprintf(tw, "order by\t%s\t%s\t\n", strings.Join(lang.Vocab.Words(lang.ClassMetric, lang.Anywhere), "|"), "order by gross desc")
	return tw.Flush()
}

// fieldType is the type of a condition's value, from the vocabulary.
func fieldType(d lang.Decl) string {
	if f, ok := d.Value.(lang.Field); ok {
		return strings.Join(lang.Vocab.Words(f.Class(), lang.Anywhere), "|")
	}
	word := d.Word
	if word == "profit" { // plain profit is net
		word = "net"
	}
	if m, ok := lang.Vocab.Lookup(lang.ClassMetric, word); ok {
		k, _ := m.Value.(lang.MetricKind)
		switch {
		case k.IsProfit():
			return "amount of a token (in TOKEN; WETH when not given)"
		case k.IsCount():
			return "integer"
		}
		return "block number"
	}
	if _, ok := lang.Vocab.Lookup(lang.ClassLevel, word); ok {
		return "structural hash at that level (0x and 64 hex digits)"
	}
	if g, ok := lang.Vocab.Lookup(lang.ClassGroupBy, word); ok && (g.Value == lang.GroupBot || g.Value == lang.GroupSender) {
		return "address (0x and 40 hex digits)"
	}
	switch word {
	case "blocks":
		return "block range A..B"
	case "reason", "has":
		return fmt.Sprintf("a reason (%d of them: .help reasons)", len(lang.Vocab.Words(lang.ClassReason, lang.Anywhere)))
	case "touches":
		return "address, or a token's address or symbol"
	case "through":
		return "integer (pools)"
	case "flashloan":
		return "no value (holds or not)"
	case "not":
		return "a condition"
	}
	return "-"
}
