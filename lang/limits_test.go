package lang

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func nested(n int) string {
	return "find where " + strings.Repeat("(", n) + "pools > 1" + strings.Repeat(")", n)
}

// TestNestingLimit: parentheses up to MaxNesting parse; one more is an
// error naming the limit, its value and where, found before parsing.
// Parentheses in comments and strings do not count.
func TestNestingLimit(t *testing.T) {
	st, err := ParseOne("q", nested(MaxNesting))
	if err != nil {
		t.Fatalf("%d levels: %v", MaxNesting, err)
	}
	if got := Dump(st); got != "Find(; Compare(pools > 1))" {
		t.Fatalf("%d levels: %s", MaxNesting, got)
	}
	_, err = Parse("q", "find;\n"+nested(MaxNesting+1))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("%d levels: want one error, got %v", MaxNesting+1, err)
	}
	col := len("find where ") + MaxNesting + 1
	want := fmt.Sprintf("q:2:%d: parentheses nested 257 deep here, over the limit of 256", col)
	if e := list[0]; e.Pos != (Pos{Offset: 6 + col - 1, Line: 2, Column: col}) || !strings.HasPrefix(e.Error(), want+"\n") {
		t.Fatalf("got %s at %+v, want %s", e, e.Pos, want)
	}
	if n := len(list[0].Error()); n > 400 {
		t.Errorf("the error is %d bytes long: its line should be cut around the column", n)
	}
	deep := strings.Repeat("(", MaxNesting+1)
	if _, err := Parse("q", "find where -- "+deep+"\n pools > 1"); err != nil {
		t.Errorf("parentheses in a comment counted: %v", err)
	}
	if _, err := Parse("q", `find where touches "`+deep+`"`); err == nil || !strings.Contains(err.Error(), "strings are not part of the language") {
		t.Errorf("parentheses in a string: want the string's error, got %v", err)
	}
	// the depth is a statement's: the next one starts at zero
	if _, err := Parse("q", strings.Repeat(nested(MaxNesting/2+1)+";", 3)); err != nil {
		t.Errorf("depth carried over statements: %v", err)
	}
}

// TestDeepNestingNoCrash is the attack of issue 15: 300,000 levels of
// parentheses (600 KB) overflowed the parser's stack, a fatal error no
// recover can catch, taking a REPL down with it. Parse runs in a child
// process, so that a crash fails this test instead of ending the run.
func TestDeepNestingNoCrash(t *testing.T) {
	if os.Getenv("FLOWQ_LANG_DEEP") == "1" {
		_, err := Parse("q", nested(300_000))
		fmt.Printf("parsed: %v\n", err)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeepNestingNoCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FLOWQ_LANG_DEEP=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "parsed: q:1:268: parentheses nested 257 deep here, over the limit of 256") {
		if len(out) > 2000 {
			out = out[:2000]
		}
		t.Fatalf("the parse of 300,000 levels: %v\n%s", err, out)
	}
}

// TestQuerySizeLimit: a statement over MaxQueryBytes is refused before it
// is parsed, naming the limit and where the statement starts; a script
// of many statements, or with long comments, has no such limit.
func TestQuerySizeLimit(t *testing.T) {
	long := "find where " + strings.Repeat("pools > 1 or ", MaxQueryBytes/13) + "pools > 2;"
	_, err := Parse("q", "find limit 1;\n-- a comment\n  "+long)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("want one error, got %v", err)
	}
	want := fmt.Sprintf("q:3:3: this statement is %d bytes long, over the limit of 1048576 bytes (1 MiB) on one statement", len(long))
	if got := list[0].Error(); !strings.HasPrefix(got, want+"\n") || len(got) > 400 {
		t.Fatalf("got %.500s\nwant %s", got, want)
	}
	comments := strings.Repeat("-- a comment line; ((((\n", MaxQueryBytes/20)
	sts, err := Parse("q", "find limit 1;\n"+comments+"count by verdict;"+comments)
	if err != nil || len(sts) != 2 {
		t.Fatalf("a script with %d bytes of comments: %d statements, %v", 2*len(comments), len(sts), err)
	}
	if p := sts[1].Pos(); p.Line != 2+MaxQueryBytes/20 || p.Column != 1 {
		t.Errorf("the second statement is at %s", p)
	}
}

// TestEmptyStatements: ";" separates statements; empty ones between and
// after them are nothing, but a script may not begin with one.
func TestEmptyStatements(t *testing.T) {
	sts, err := Parse("q", "find;; -- nothing\n ;count by verdict;;")
	if err != nil || len(sts) != 2 {
		t.Fatalf("%d statements, %v", len(sts), err)
	}
	if _, err := Parse("q", "-- c\n ;find"); err == nil || !strings.HasPrefix(err.Error(), `q:2:2: unexpected ";"`) {
		t.Fatalf("a leading ;: %v", err)
	}
}

// TestErrorsStayShort: an error prints a window of a long line around its
// column, and a list prints its first errors and how many more there are.
// 2,000 errors on one 30 KB line printed 90 MB.
func TestErrorsStayShort(t *testing.T) {
	src := "find where " + strings.Repeat("pools > 1.5 or ", 2000) + "hops > 2"
	_, err := Parse("q", src)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2000 {
		t.Fatalf("want 2000 errors, got %d: %.300v", len(list), err)
	}
	msg := err.Error()
	if len(msg) > 10_000 || !strings.HasSuffix(msg, "(and 1990 more errors)") {
		t.Fatalf("the message is %d bytes long; it ends %q", len(msg), msg[max(0, len(msg)-200):])
	}
	// the window is around the column, and the caret under it
	e := list[1000].Error()
	lines := strings.Split(e, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "    …") || !strings.HasSuffix(lines[1], "…") {
		t.Fatalf("error 1000:\n%s", e)
	}
	caret := strings.Index(lines[2], "^")
	if got := string([]rune(lines[1])[len([]rune(lines[2][:caret]))]); got != "1" || !strings.Contains(e, "not 1.5") {
		t.Fatalf("the caret points at %q:\n%s", got, e)
	}
	// words of the input are cut in messages too
	_, err = Parse("q", "find where "+strings.Repeat("x", 100_000)+" > 1")
	if err == nil || len(err.Error()) > 1000 {
		t.Fatalf("a 100,000-letter word: %d bytes of error", len(fmt.Sprint(err)))
	}
}

// TestParseAt: a statement read at a line and column of a larger input
// (the REPL's) gets that input's positions, and its error's caret lines
// up with the column.
func TestParseAt(t *testing.T) {
	sts, err := ParseAt("stdin", "  find where pools > 1", Pos{Line: 7, Column: 5})
	if err != nil {
		t.Fatal(err)
	}
	if p := sts[0].Pos(); p != (Pos{Offset: 2, Line: 7, Column: 7}) {
		t.Fatalf("position %+v", p)
	}
	_, err = ParseAt("stdin", " fnd;\n  count by nothing", Pos{Line: 3, Column: 6})
	want := "stdin:3:7: unexpected \"fnd\" (did you mean \"find\"?)\n" + strings.Repeat(" ", 4+6) + "fnd;\n" + strings.Repeat(" ", 4+6) + "^"
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
	_, err = ParseAt("stdin", "find;\n  count by nothing", Pos{Line: 3, Column: 6})
	if err == nil || !strings.HasPrefix(err.Error(), "stdin:4:12: unknown grouping \"nothing\"") {
		t.Fatalf("second line: %v", err)
	}
}

// TestParseMemoryLinear: parsing a chain of n terms allocates in
// proportion to n, so a query of the size limit stays within a few
// hundred megabytes.
func TestParseMemoryLinear(t *testing.T) {
	perTerm := func(n int) float64 {
		src := "find where " + strings.Repeat("bot = 0x0123456789abcdef0123456789abcdef01234567 or ", n) + "pools > 1"
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Parse("q", src); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perTerm(1000), perTerm(8000)
	t.Logf("bytes allocated per term: %.0f at 1,000 terms, %.0f at 8,000", small, large)
	if large > 2*small || large > 20_000 {
		t.Errorf("parsing allocates %.0f bytes per term at 8,000 terms, %.0f at 1,000: not linear", large, small)
	}
}
