package normalform

import "github.com/flowq/flowq/normalform/witness"

// WitnessBudget bounds the independent checker's search for one verdict:
// enough for every real transaction seen, small enough that an adversarial
// one costs milliseconds.
const WitnessBudget = 200_000

// CheckerTransfers reads transfers as the independent checker of
// Definition 5 does: s, d, a, τ and the trace position, nothing else.
func CheckerTransfers(ts []Transfer) []witness.Transfer[Token] {
	return appendCheckerTransfers(make([]witness.Transfer[Token], 0, len(ts)), ts)
}

// appendCheckerTransfers appends CheckerTransfers(ts) to out.
func appendCheckerTransfers(out []witness.Transfer[Token], ts []Transfer) []witness.Transfer[Token] {
	for i := range ts {
		t := &ts[i]
		out = append(out, witness.Transfer[Token]{From: t.From, To: t.To, Amount: t.Amount, Token: t.Token, Pos: t.Pos})
	}
	return out
}
