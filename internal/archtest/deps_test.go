// Package archtest holds the dependency rules of ARCHITECTURE.md, as
// go/build's deps_test.go holds the standard library's.
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/flowq/flowq"

// layers: which flowq packages each layer may import (its own
// sub-packages are always allowed). A package belongs to the layer named
// by its first path element.
var layers = map[string][]string{
	"normalform": {},
	"lang":       {"normalform"}, // the vocabulary: verdicts, tiers, reasons, levels, paths, modes
	"index":      {"normalform"},
	"planner":    {"normalform", "index", "lang"},
	"repl":       {"normalform", "index", "lang", "planner"},
	"cmd":        {"normalform", "index", "lang", "planner", "repl", "examples"},
	"internal":   {"normalform", "index", "lang", "planner", "repl"},
	"examples":   {"normalform", "index", "lang", "planner", "repl"},
}

// owners: imports only some layers may use. Prefix match on the import path.
var owners = []struct {
	prefix string
	may    func(pkg string) bool
	why    string
}{
	{"github.com/dgraph-io/badger", func(p string) bool { return layerOf(p) == "index" }, "only index knows Badger"},
	{"github.com/chzyer/readline", func(p string) bool { return p == module+"/repl/term" || layerOf(p) == "cmd" }, "only the terminal loop (repl/term) and cmd import readline"},
	{"github.com/ethereum/go-ethereum/rpc", isFetch, "only the fetching layer imports the RPC client"},
	{"github.com/ethereum/go-ethereum/ethclient", isFetch, "only the fetching layer imports the RPC client"},
	{"github.com/alecthomas/participle", func(p string) bool { return layerOf(p) == "lang" }, "participle stays inside the parser"},
}

// pure: standard packages normalform must not import (it does no I/O).
var impure = []string{"os", "os/exec", "os/signal", "net", "net/http", "syscall", "io/ioutil", "database/sql", "plugin", "path/filepath"}

func isFetch(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == "fetch" {
			return true
		}
	}
	return layerOf(p) == "cmd" && strings.Contains(p, "fetch")
}

func layerOf(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	return strings.SplitN(rel, "/", 2)[0]
}

// imports returns, per package of the module, its direct imports from
// non-test files.
func imports(t *testing.T) map[string][]string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := module + "/" + filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			out[pkg] = append(out[pkg], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDependencyRules(t *testing.T) {
	pkgs := imports(t)
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages: is the walk rooted at the module?", len(pkgs))
	}
	var names []string
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, pkg := range names {
		if _, ok := layers[layerOf(pkg)]; !ok {
			t.Errorf("%s: top-level directory %q is not a layer of ARCHITECTURE.md", pkg, layerOf(pkg))
			continue
		}
		for _, imp := range pkgs[pkg] {
			for _, why := range check(pkg, imp) {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}

// TestRulesCatchViolations makes sure the checker can fail: it runs the
// rules over a made-up package graph with one violation of each kind.
func TestRulesCatchViolations(t *testing.T) {
	bad := map[string]string{
		module + "/normalform":         module + "/index",
		module + "/normalform/trace":   "os",
		module + "/normalform/witness": module + "/normalform",
		module + "/planner":            "github.com/dgraph-io/badger/v4",
		module + "/lang":               module + "/planner",
		module + "/index":              "github.com/chzyer/readline",
		module + "/repl":               "github.com/chzyer/readline",
		module + "/normalform/x":       "github.com/ethereum/go-ethereum/rpc",
	}
	for pkg, imp := range bad {
		if len(check(pkg, imp)) == 0 {
			t.Errorf("%s importing %s should violate the rules", pkg, imp)
		}
	}
	if why := check(module+"/index", module+"/normalform"); len(why) != 0 {
		t.Errorf("index importing normalform is allowed, got %v", why)
	}
}

// check returns why pkg may not import imp (nothing when it may).
func check(pkg, imp string) []string {
	var why []string
	layer := layerOf(pkg)
	if strings.HasPrefix(imp, module+"/") {
		if il := layerOf(imp); il != layer && !contains(layers[layer], il) {
			why = append(why, "layer "+layer+" may not depend on "+il)
		}
	}
	for _, o := range owners {
		if strings.HasPrefix(imp, o.prefix) && !o.may(pkg) {
			why = append(why, o.why)
		}
	}
	if layer == "normalform" && contains(impure, imp) {
		why = append(why, "normalform is pure (no I/O)")
	}
	if pkg == module+"/normalform/witness" && strings.HasPrefix(imp, module+"/") {
		why = append(why, "the checker of Definition 5 is independent: it imports nothing of flowq")
	}
	return why
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
