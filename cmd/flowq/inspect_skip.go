package main

import (
	"regexp"
	"strings"

	"github.com/flowq/flowq/normalform/trace"
)

// topLevel is the path of the whole document or of one element of a
// top-level array.
var topLevel = regexp.MustCompile(`^\$(\[[0-9]+\])?$`)

// notATrace reports whether a JSON file found in a directory is not a
// trace at all (a package.json, a config file): no transaction decoded,
// and every error says that the document, or an element of its
// top-level array, is not one of the shapes flowq reads. inspect DIR
// skips such a file, naming it, rather than failing on it; a file that
// is a trace, broken inside, still fails.
func notATrace(in input, res *trace.Result) (why string, ok bool) {
	if !in.found || len(res.Txs) > 0 || len(res.Errors) == 0 {
		return "", false
	}
	for _, e := range res.Errors {
		if !topLevel.MatchString(e.Path) || !(strings.HasPrefix(e.Msg, "unrecognised object") || strings.HasPrefix(e.Msg, "expected an object")) {
			return "", false
		}
	}
	return "not a trace (" + res.Errors[0].Msg + ")", true
}
