package archtest

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ARCHITECTURE.md's picture of the layers and the imports column of its
// package table are generated from the code, so that they cannot drift:
// TestArchitectureDoc compares them with the direct imports of every
// non-test file (imports, as TestDependencyRules reads them), and
//
//	go test ./internal/archtest -run TestArchitectureDoc -update
//
// rewrites both regions. The other columns (job, owns) stay hand-written.

var update = flag.Bool("update", false, "rewrite ARCHITECTURE.md's generated regions from the code")

const (
	pictureBegin = "<!-- picture:begin (generated: go test ./internal/archtest -update) -->"
	pictureEnd   = "<!-- picture:end -->"
	tableBegin   = "<!-- imports:begin (the imports column is generated: go test ./internal/archtest -update) -->"
	tableEnd     = "<!-- imports:end -->"
)

// flowqImports is, per package of the module (module-relative), its
// direct imports from the module, sorted.
func flowqImports(all map[string][]string) map[string][]string {
	out := map[string][]string{}
	for pkg, imps := range all {
		rel := strings.TrimPrefix(pkg, module+"/")
		set := map[string]bool{}
		for _, imp := range imps {
			if strings.HasPrefix(imp, module+"/") {
				set[strings.TrimPrefix(imp, module+"/")] = true
			}
		}
		l := []string{}
		for p := range set {
			l = append(l, p)
		}
		sort.Strings(l)
		out[rel] = l
	}
	return out
}

// picture draws the packages in rows, each importing only from the rows
// below it: a package's row is the length of its longest import chain.
func picture(deps map[string][]string) string {
	depth := map[string]int{}
	var walk func(p string) int
	walk = func(p string) int {
		if d, ok := depth[p]; ok {
			return d
		}
		depth[p] = 0 // a cycle would stop here (the compiler forbids one)
		d := 0
		for _, q := range deps[p] {
			d = max(d, walk(q)+1)
		}
		depth[p] = d
		return d
	}
	top := 0
	for p := range deps {
		top = max(top, walk(p))
	}
	rows := make([][]string, top+1)
	for p, d := range depth {
		rows[d] = append(rows[d], p)
	}
	var b strings.Builder
	b.WriteString("```\n")
	for d := top; d >= 0; d-- {
		sort.Strings(rows[d])
		fmt.Fprintf(&b, "%d  %s\n", d, strings.Join(rows[d], "  "))
	}
	b.WriteString("```\n\nEach row imports only from the rows below it (its number is the length of\nits longest import chain within flowq; non-test files).\n")
	return b.String()
}

// cell is the generated imports cell of pkg.
func cell(imps []string) string {
	if len(imps) == 0 {
		return "—"
	}
	q := make([]string, len(imps))
	for i, p := range imps {
		q[i] = "`" + p + "`"
	}
	return strings.Join(q, ", ")
}

// splitRow splits a table row into its cells (no cell of the table
// holds a "|").
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// table regenerates the imports column (the third) of the table region
// and returns it with the problems found: rows of packages that do not
// exist, packages without a row.
func table(region string, deps map[string][]string) (string, []string) {
	var out []string
	var problems []string
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.Trim(region, "\n"), "\n") {
		cells := splitRow(line)
		if len(cells) != 4 || !strings.HasPrefix(cells[0], "`") {
			out = append(out, line) // header and separator
			continue
		}
		pkg := strings.Trim(cells[0], "`")
		imps, ok := deps[pkg]
		if !ok {
			problems = append(problems, fmt.Sprintf("ARCHITECTURE.md has a row for %s, which is not a package of the module (with non-test files)", pkg))
			out = append(out, line)
			continue
		}
		seen[pkg] = true
		if c := cell(imps); c != cells[2] { // an unchanged row keeps its spacing
			cells[2] = c
			line = strings.ReplaceAll("| "+strings.Join(cells, " | ")+" |", "|  |", "| |")
		}
		out = append(out, line)
	}
	var missing []string
	for p := range deps {
		if !seen[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		problems = append(problems, fmt.Sprintf("ARCHITECTURE.md has no row for the package %s: add one (its job and what it owns)", p))
	}
	return strings.Join(out, "\n") + "\n", problems
}

// between returns the text between begin and end in doc, and where it is.
func between(doc, begin, end string) (string, int, int, error) {
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", 0, 0, fmt.Errorf("the markers %q ... %q are missing or out of order", begin, end)
	}
	i += len(begin)
	return doc[i:j], i, j, nil
}

// regenerate returns doc with its generated regions made from deps, and
// the problems found.
// tests are the packages with test files only: they have a row (its
// imports cell "—") and no place in the picture.
func regenerate(doc string, deps map[string][]string, tests []string) (string, []string, error) {
	_, i, j, err := between(doc, pictureBegin, pictureEnd)
	if err != nil {
		return "", nil, err
	}
	doc = doc[:i] + "\n" + picture(deps) + doc[j:]
	region, i, j, err := between(doc, tableBegin, tableEnd)
	if err != nil {
		return "", nil, err
	}
	withTests := map[string][]string{}
	for p, l := range deps {
		withTests[p] = l
	}
	for _, p := range tests {
		withTests[p] = nil
	}
	t, problems := table(region, withTests)
	return doc[:i] + "\n" + t + doc[j:], problems, nil
}

func TestArchitectureDoc(t *testing.T) {
	path, err := filepath.Abs("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	deps := flowqImports(imports(t))
	tests := testOnly(t, deps)
	got, problems, err := regenerate(doc, deps, tests)
	if err != nil {
		t.Fatalf("ARCHITECTURE.md: %v", err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if got == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	t.Errorf("ARCHITECTURE.md's picture or imports column does not match the code (go test ./internal/archtest -update rewrites them):\n%s", firstDiff(doc, got))
}

// testOnly lists the module's directories (module-relative) that hold
// Go test files and no other Go file.
func testOnly(t *testing.T, deps map[string][]string) []string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
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
		if strings.HasSuffix(path, "_test.go") {
			rel, _ := filepath.Rel(root, filepath.Dir(path))
			if rel = filepath.ToSlash(rel); deps[rel] == nil {
				if _, ok := deps[rel]; !ok {
					found[rel] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range found {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  doc:  %s\n  code: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("the doc has %d lines, the code's version %d", len(la), len(lb))
}

// TestArchitectureDocCatchesDrift: the comparison fails when the doc's
// imports column or picture says other than the code, when a row names
// no package, and when a package has no row.
func TestArchitectureDocCatchesDrift(t *testing.T) {
	deps := map[string][]string{"normalform": {}, "index": {"normalform"}, "cmd/flowq": {"index", "normalform"}}
	doc := "x\n" + pictureBegin + "\n" + pictureEnd + "\n" + tableBegin + `
| package | job | imports (flowq) | owns |
|---|---|---|---|
| ` + "`normalform`" + ` | the paper | — | nothing |
| ` + "`index`" + ` | the store | — | Badger |
| ` + "`cmd/flowq`" + ` | the command | ` + "`index`" + ` | |
` + tableEnd + "\n"
	fixed, problems, err := regenerate(doc, deps, nil)
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v %v", err, problems)
	}
	if fixed == doc {
		t.Fatal("a doc whose imports column is wrong was found up to date")
	}
	for _, want := range []string{"| `index` | the store | `normalform` | Badger |", "| `cmd/flowq` | the command | `index`, `normalform` | |",
		"2  cmd/flowq\n1  index\n0  normalform\n"} {
		if !strings.Contains(fixed, want) {
			t.Errorf("regenerated doc lacks %q:\n%s", want, fixed)
		}
	}
	again, _, _ := regenerate(fixed, deps, nil)
	if again != fixed {
		t.Error("regenerating an up-to-date doc changed it")
	}
	deps["lang"] = []string{"normalform"}
	delete(deps, "cmd/flowq")
	_, problems, _ = regenerate(fixed, deps, nil)
	if len(problems) != 2 {
		t.Errorf("a package without a row and a row without a package: got %v", problems)
	}
	if _, _, err := regenerate("no markers", deps, nil); err == nil {
		t.Error("a doc without markers passed")
	}
}
