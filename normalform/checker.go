package normalform

import "github.com/flowq/flowq/normalform/witness"

// WitnessBudget bounds the independent checker's search for one verdict:
// enough for every real transaction seen, small enough that an adversarial
// one costs milliseconds.
const WitnessBudget = 200_000

// CheckerTransfers reads transfers as the independent checker of
// Definition 5 does: s, d, a, τ and the trace position, nothing else.
func CheckerTransfers(ts []Transfer) []witness.Transfer[Token] {
	out := make([]witness.Transfer[Token], len(ts))
	for i := range ts {
		t := &ts[i]
		out[i] = witness.Transfer[Token]{From: t.From, To: t.To, Amount: t.Amount, Token: t.Token, Pos: t.Pos}
	}
	return out
}
