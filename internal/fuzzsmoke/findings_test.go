package fuzzsmoke

// The stored block findings' reader (schema 8's binary form, issue 22),
// in a file of its own so that the list above keeps its alignment.
func init() {
	Targets = append(Targets, struct{ Pkg, Name string }{"./normalform/block", "FuzzDecodeFindings"})
}
