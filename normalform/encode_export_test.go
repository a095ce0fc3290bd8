package normalform

// ChainLookupAgrees reports whether the encoder's chain lookup (the
// chains collect gathers, searched or indexed) finds, for every id the
// normal form's inner chains use and for one it does not, the chain
// chainsByID finds; n is the number of inner chains.
func ChainLookupAgrees(a *Analysis) (n int, ok bool) {
	e := &encoder{}
	e.collect(a)
	m := chainsByID(a.NF)
	var top int32
	for id, c := range m {
		if e.chainByID(id) != c {
			return len(e.chains), false
		}
		top = max(top, id)
	}
	return len(e.chains), e.chainByID(top+1) == nil
}
