package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goName is a Go name of flowq's packages in a message (lang.MaxNesting,
// *index.LockedError) or a verb that prints a Go type.
var goName = regexp.MustCompile(`%T|\*?\b(index|lang|repl|planner|normalform|trace|fetch|serve|block|badger|examples)\.[A-Z][A-Za-z]*`)

// TestNoGoNamesInErrors: no error message of flowq names a Go type,
// variable or package member, which a user of the binary cannot look up:
// every string literal given to fmt.Errorf, errors.New, or a Go error
// type's message in the repository's non-test code is checked.
func TestNoGoNamesInErrors(t *testing.T) {
	root := "../.."
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "workload", "scenario":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		check := func(lit *ast.BasicLit) {
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return
			}
			n++
			if m := goName.FindString(s); m != "" {
				t.Errorf("%s: an error message names the Go name %q: %q", fset.Position(lit.Pos()), m, s)
			}
		}
		ast.Inspect(f, func(x ast.Node) bool {
			// an error's parts: Msg and Hint fields, and constants named …Msg
			if kv, ok := x.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Msg" || k.Name == "Hint") {
					if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						check(lit)
					}
				}
			}
			if vs, ok := x.(*ast.ValueSpec); ok {
				for i, name := range vs.Names {
					if lit, ok := valueAt(vs, i).(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.HasSuffix(name.Name, "Msg") {
						check(lit)
					}
				}
			}
			call, ok := x.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, _ := sel.X.(*ast.Ident)
			if pkg == nil || !(pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && sel.Sel.Name == "New") {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				check(lit)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("only %d error messages found: the walk missed the code", n)
	}
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// TestHelpNamesCommands: the help of flowq and of each command names
// commands, not files that a user of the binary does not have (README,
// go doc of a package).
func TestHelpNamesCommands(t *testing.T) {
	files := regexp.MustCompile(`README|ARCHITECTURE|\.md\b|go doc|\./(lang|index|repl|planner)\b`)
	texts := map[string]string{}
	out, _, _ := flowq(t, nil, "", "help")
	texts["flowq help"] = out
	for _, c := range []string{"demo", "inspect", "fetch", "ingest", "export", "verify", "query", "run", "draw", "repl", "serve"} {
		_, errs, code := flowq(t, nil, "", c, "-h")
		if code != 0 && code != 2 {
			t.Errorf("flowq %s -h: exit %d", c, code)
		}
		texts["flowq "+c+" -h"] = errs
	}
	for name, text := range texts {
		if len(text) < 40 {
			t.Errorf("%s: no help: %q", name, text)
		}
		if m := files.FindString(text); m != "" {
			t.Errorf("%s names %q, which a user of the binary does not have:\n%s", name, m, text)
		}
	}
}
