// Package show is the presentation of normal forms, kept out of the
// algebra (package normalform): the pictures as Graphviz DOT text
// (TransferGraphDOT, NormalFormDOT). It imports normalform; nothing in
// normalform imports it. Like normalform it does no I/O: laying the text
// out with Graphviz is repl.Picture's.
package show
