package layout

import "fmt"

// Shortened references (0x3db1a7, 0x3db1…dcfa) are resolved by every store
// the planner reads (the index's keys, the lake's columns) under the same
// limits and with the same messages: a reference gives at least
// MinShortDigits hex digits, and at least MinShortLead before the "…" when
// digits follow it (a lookup is bounded by the leading ones).
const (
	MinShortDigits = 6
	MinShortLead   = 4
)

// CheckShortRef says why a store cannot look up the shortened reference
// prefix…suffix of a value of width hex digits (not lowercase hex, too
// few digits, or more than the value has), as a message; "" when it can.
func CheckShortRef(prefix, suffix string, width int) string {
	for _, c := range prefix + suffix {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Sprintf("%q is not lowercase hex digits", prefix+"…"+suffix)
		}
	}
	n := len(prefix) + len(suffix)
	switch {
	case n > width:
		return fmt.Sprintf("%d hex digits given, and the value has %d", n, width)
	case n < MinShortDigits:
		return fmt.Sprintf("0x%s: a prefix needs at least %d hex digits", prefix, MinShortDigits)
	case suffix != "" && len(prefix) < MinShortLead:
		return fmt.Sprintf("0x%s…%s: a shortened value needs at least %d hex digits before the …", prefix, suffix, MinShortLead)
	}
	return ""
}
