// Package examples holds flowq's bundled inputs and query files, embedded
// in the binary so that `flowq demo` runs anywhere: the four mainnet
// traces of mainnet/, the geth-shaped scenario bundles of scenarios/geth
// (real contracts run on an in-process EVM; the Parity-shaped twins stay
// on disk, they are the same transactions), the tour and the query files
// of queries/ with their expected output.
package examples

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/flowq/flowq/index/ingest"
)

//go:embed mainnet/*.json scenarios/geth/*.json tour.fq queries/*.fq
var files embed.FS

// Inputs are the bundled traces as index inputs, named examples/PATH, in
// name order.
func Inputs() []ingest.Input {
	var in []ingest.Input
	for _, dir := range []string{"mainnet", "scenarios/geth"} {
		for _, name := range names(dir, ".json") {
			b, err := files.ReadFile(name)
			if err != nil {
				panic("examples: embedded file " + name + ": " + err.Error()) // the embed pattern guarantees it
			}
			in = append(in, ingest.BundleInput("examples/"+name, b))
		}
	}
	return in
}

// Tour is the tour script `flowq demo` runs.
func Tour() string { return read("tour.fq") }

// Query is a bundled query file.
type Query struct {
	Name string // examples/queries/NAME.fq
	Src  string
}

// Queries are the query files of queries/, in name order.
func Queries() []Query {
	var qs []Query
	for _, name := range names("queries", ".fq") {
		qs = append(qs, Query{Name: "examples/" + name, Src: read(name)})
	}
	return qs
}

func read(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("examples: embedded file " + name + ": " + err.Error())
	}
	return string(b)
}

func names(dir, ext string) []string {
	ents, err := fs.ReadDir(files, dir)
	if err != nil {
		panic("examples: embedded directory " + dir + ": " + err.Error())
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ext) {
			out = append(out, path.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}
