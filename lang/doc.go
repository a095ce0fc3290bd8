// Package lang will parse flowq's query language (with participle) into
// flowq's own AST. It knows nothing of execution. Not built yet: see issue 6.
package lang
