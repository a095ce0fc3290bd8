package sqlgen

import (
	"fmt"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// Shortened references on the lake: the values a prefix (and a suffix,
// for 0x3db1…dcfa) names are read from the column that holds them whole,
// by a range over its hex text (col >= '0xPREFIX' AND col < '0xPREFIXg':
// every lowercase hex digit sorts before 'g'), which min/max statistics
// prune like a block range; the planner (planner/resolve.go) turns what
// comes back into the statement's value or its not-found and ambiguity
// errors, word for word as on the index.
//
// The digit limits and their messages are the index's
// (layout.CheckShortRef).

// ResolveError is a reference the lake cannot resolve by prefix: too few
// digits, not hex, or too many (index.ResolveError's messages).
type ResolveError struct{ Msg string }

func (e *ResolveError) Error() string { return e.Msg }

// ResolveSQL is the query that lists, in order, at most max distinct
// values of the lake whose hex digits start with prefix and end with
// suffix (lowercase, without 0x): transaction hashes (layout.KindTxHash,
// column tx_hash), bots' addresses (layout.KindFirst, column bot: the
// recipients, as the index's first keys), or structural hashes at a level
// (layout.KindHash, column hash_LEVEL).
func (c *Compiler) ResolveSQL(by layout.Kind, level normalform.Level, prefix, suffix string, max int) (string, error) {
	col, width := "", 64
	switch by {
	case layout.KindTxHash:
		col = "tx_hash"
	case layout.KindFirst:
		col, width = "bot", 40
	case layout.KindHash:
		col = hashColumn(level)
	default:
		return "", &ResolveError{Msg: fmt.Sprintf("key kind %d: the lake resolves transactions, bots and structural hashes", by)}
	}
	if err := checkDigits(prefix, suffix, width); err != nil {
		return "", err
	}
	if max <= 0 {
		max = 100
	}
	where := fmt.Sprintf("%s >= %s AND %s < %s", col, str("0x"+prefix), col, str("0x"+prefix+"g"))
	if suffix != "" {
		ends := "ends_with"
		if c.Dialect == ClickHouse {
			ends = "endsWith"
		}
		where += fmt.Sprintf(" AND %s(%s, %s)", ends, col, str(suffix))
	}
	return fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s ORDER BY %s LIMIT %d", col, c.table(), where, col, max), nil
}

func checkDigits(prefix, suffix string, width int) error {
	if msg := layout.CheckShortRef(prefix, suffix, width); msg != "" {
		return &ResolveError{Msg: msg}
	}
	return nil
}
