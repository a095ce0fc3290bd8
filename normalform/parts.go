package normalform

// What the pictures (normalform/show) read of the algebra.

// IsBuilderPayment: native value from a coalition account to the block's
// coinbase.
func (a *Analysis) IsBuilderPayment(t *Transfer) bool { return a.isBuilderPayment(t) }

// FlattenPar is κ's flattening of nested parallel merges (R7, R13): the
// arms of c in trace order, appended to dst.
func FlattenPar(c *Chain, dst []*Chain) []*Chain { return flattenPar(c, dst) }

func containsToken(l []Token, t Token) bool {
	for _, x := range l {
		if x == t {
			return true
		}
	}
	return false
}
