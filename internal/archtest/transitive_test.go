package archtest

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The transitive rules: what a package reaches through every import, not
// only its own (as go/build's deps_test.go checks the standard library).
// A direct import may be allowed (planner may import the index layer)
// while what it drags in is not (the index's Badger).

// noStore: packages (with their sub-packages) that must never reach the
// store (Badger), whatever they import, but for noStoreExcept. The REPL
// works on a repl.Store its program gives it: repl/local is that store
// over Badger, and the server (repl/serve) runs ingest jobs itself.
var (
	noStore       = []string{module + "/planner", module + "/lang", module + "/index/layout", module + "/repl"}
	noStoreExcept = []string{module + "/repl/local", module + "/repl/serve"}
)

// storePrefixes are the import paths of the store.
var storePrefixes = []string{"github.com/dgraph-io/badger", module + "/index"}

// pureRoots: packages (with their sub-packages) that do no I/O: they may
// reach the standard library's I/O packages only as far as the packages
// below do (fmt reaches os; go-ethereum's common and uint256 reach
// path/filepath and database/sql for their own methods, which normalform
// never calls), and never a package that reaches more.
var pureRoots = []string{module + "/normalform", module + "/index/layout"}

// pureBase: what a pure package may reach, and all it reaches.
var pureBase = []string{"fmt", "github.com/ethereum/go-ethereum/common", "github.com/holiman/uint256"}

// ioPrefixes are the I/O packages of the standard library (a package or
// its sub-packages).
var ioPrefixes = []string{"os", "net", "syscall", "io/ioutil", "database/sql", "plugin", "path/filepath", "log"}

// noReadline: packages (with their sub-packages) that never reach
// readline, but for the terminal loop (repl/term): flowq query, run and
// serve use repl.Session and must not link it.
var (
	noReadline       = []string{module + "/repl"}
	noReadlineExcept = []string{module + "/repl/term"}
	readlinePrefixes = []string{"github.com/chzyer/readline"}
)

// storeOnly: the store and its layout only store. They never reach the
// decoder (normalform/trace), the pipeline that fills them (index/ingest),
// the fetcher (index/fetch) or an RPC client, and reach the network
// packages only as far as Badger does (its tracing reaches net/http).
var (
	storeOnly     = []string{module + "/index", module + "/index/layout"}
	pipelineParts = []string{module + "/normalform/trace", module + "/index/ingest", module + "/index/fetch", "github.com/ethereum/go-ethereum/rpc", "github.com/ethereum/go-ethereum/ethclient"}
	netPrefixes   = []string{"net"}
	badgerBase    = []string{"github.com/dgraph-io/badger/v4"}
)

// graph is a package graph: each package's imports (non-test files).
type graph map[string][]string

// goList returns the import graph of the named packages and of
// everything they reach, from go list.
func goList(t *testing.T, pkgs ...string) graph {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed for the transitive rules: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, pkgs...)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %v: %v\n%s", pkgs, err, stderr.String())
	}
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	return g
}

// path returns a shortest import chain from pkg to a package bad
// accepts (nil: none), pkg first.
func (g graph) path(pkg string, bad func(string) bool) []string {
	return g.pathAvoiding(pkg, bad, func(string) bool { return false })
}

// pathAvoiding is path, not going on through the packages avoid accepts
// (what they reach is theirs to answer for).
func (g graph) pathAvoiding(pkg string, bad, avoid func(string) bool) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != pkg && bad(p) {
			var chain []string
			for x := p; x != ""; x = prev[x] {
				chain = append([]string{x}, chain...)
			}
			return chain
		}
		if p != pkg && avoid(p) {
			continue
		}
		for _, q := range g[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}

// reach is every package pkgs reach, themselves included.
func (g graph) reach(pkgs ...string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, q := range g[p] {
			walk(q)
		}
	}
	for _, p := range pkgs {
		walk(p)
	}
	return seen
}

func hasPrefix(p string, prefixes []string) bool {
	for _, x := range prefixes {
		if p == x || strings.HasPrefix(p, x+"/") {
			return true
		}
	}
	return false
}

// checkTransitive returns the violations of the transitive rules in g
// (base: what pureBase reaches): each a package and the chain that
// breaks a rule.
func checkTransitive(g graph, base, badger map[string]bool) []string {
	var pkgs []string
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var out []string
	for _, pkg := range pkgs {
		if hasPrefix(pkg, noStore) && !hasPrefix(pkg, noStoreExcept) {
			if chain := g.path(pkg, func(p string) bool { return hasPrefix(p, storePrefixes) && !hasPrefix(p, noStore) }); chain != nil {
				out = append(out, pkg+" reaches the store: "+strings.Join(chain, " -> "))
			}
		}
		if hasPrefix(pkg, noReadline) && !hasPrefix(pkg, noReadlineExcept) {
			if chain := g.path(pkg, func(p string) bool { return hasPrefix(p, readlinePrefixes) }); chain != nil {
				out = append(out, pkg+" reaches readline (only the terminal loop, repl/term, may): "+strings.Join(chain, " -> "))
			}
		}
		if contains(storeOnly, pkg) {
			if chain := g.path(pkg, func(p string) bool { return hasPrefix(p, pipelineParts) }); chain != nil {
				out = append(out, pkg+" reaches the pipeline (storage only stores): "+strings.Join(chain, " -> "))
			}
			if chain := g.pathAvoiding(pkg, func(p string) bool { return hasPrefix(p, netPrefixes) }, func(p string) bool { return badger[p] }); chain != nil {
				out = append(out, pkg+" reaches the network beyond Badger: "+strings.Join(chain, " -> "))
			}
		}
		if hasPrefix(pkg, pureRoots) {
			if chain := g.path(pkg, func(p string) bool { return !base[p] && hasPrefix(p, ioPrefixes) }); chain != nil {
				out = append(out, pkg+" reaches I/O: "+strings.Join(chain, " -> "))
			}
		}
	}
	return out
}

// TestTransitiveRules: planner, lang, index/layout and repl (but
// repl/local and repl/serve) never reach the store; normalform and index/layout reach no I/O but what fmt and their
// two allowed libraries reach; repl (but repl/term) never reaches
// readline; index and index/layout never reach the decoder, the
// pipeline, the fetcher or the network beyond Badger.
func TestTransitiveRules(t *testing.T) {
	g := goList(t, "./...")
	for _, p := range []string{module + "/planner", module + "/lang", module + "/index/layout", module + "/normalform", module + "/repl", module + "/repl/local"} {
		if _, ok := g[p]; !ok {
			t.Fatalf("go list does not list %s", p)
		}
	}
	base := goList(t, pureBase...).reach(pureBase...)
	badger := goList(t, badgerBase...).reach(badgerBase...)
	for _, v := range checkTransitive(g, base, badger) {
		t.Error(v)
	}
}

// TestTransitiveRulesCatchViolations: the transitive checker fails on a
// made-up graph whose every direct import the direct rules allow.
func TestTransitiveRulesCatchViolations(t *testing.T) {
	base := map[string]bool{"fmt": true, "os": true}
	badger := map[string]bool{"github.com/dgraph-io/badger/v4": true, "net/http": true, "net": true}
	for name, g := range map[string]graph{
		"planner through index": {
			module + "/planner": {module + "/index/layout", module + "/index"},
			module + "/index":   {"github.com/dgraph-io/badger/v4"},
		},
		"lang through a library": {
			module + "/lang":        {"example.com/lib"},
			"example.com/lib":       {"example.com/lib/store"},
			"example.com/lib/store": {"github.com/dgraph-io/badger/v4/options"},
		},
		"normalform through a library": {
			module + "/normalform": {"fmt", "example.com/lib"},
			"fmt":                  {"os"},
			"example.com/lib":      {"net/http"},
		},
		"layout reaching os/exec": {
			module + "/index/layout": {"os/exec"},
		},
		"repl through the index": {
			module + "/repl":         {module + "/planner", module + "/index/ingest"},
			module + "/index/ingest": {module + "/index"},
			module + "/index":        {"github.com/dgraph-io/badger/v4"},
		},
		"repl/term through repl/local": {
			module + "/repl/term":  {module + "/repl/local"},
			module + "/repl/local": {module + "/index"},
		},
		"repl through a library to readline": {
			module + "/repl":  {"example.com/lib"},
			"example.com/lib": {"github.com/chzyer/readline"},
		},
		"index reaching the decoder": {
			module + "/index":            {module + "/normalform/trace"},
			module + "/normalform/trace": {module + "/normalform"},
		},
		"index reaching the fetcher": {
			module + "/index": {"example.com/lib"},
			"example.com/lib": {module + "/index/fetch"},
		},
		"index reaching net itself": {
			module + "/index": {"github.com/dgraph-io/badger/v4", "net"},
		},
	} {
		if v := checkTransitive(g, base, badger); len(v) == 0 {
			t.Errorf("%s: no violation found", name)
		} else {
			t.Logf("%s: %s", name, v[0])
		}
	}
	ok := graph{
		module + "/planner":              {module + "/index/layout", "fmt"},
		module + "/index/layout":         {module + "/normalform", "fmt"},
		module + "/normalform":           {"fmt"},
		"fmt":                            {"os"},
		module + "/repl/term":            {module + "/repl", "github.com/chzyer/readline"},
		module + "/repl":                 {module + "/planner"},
		module + "/repl/local":           {module + "/index"},
		module + "/index":                {module + "/index/layout", "github.com/dgraph-io/badger/v4"},
		"github.com/dgraph-io/badger/v4": {"net/http"},
		"net/http":                       {"net"},
	}
	if v := checkTransitive(ok, base, badger); len(v) != 0 {
		t.Errorf("a clean graph: %v", v)
	}
}
