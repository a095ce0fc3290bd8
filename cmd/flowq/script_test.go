package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the testscript transcripts run flowq as a command: the
// test binary re-executes itself as "flowq" (and as the helpers of the
// fault tests, fault_test.go). The commands are on $PATH for every test.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flowq":                 func() { os.Exit(runMain()) },
		"flowq-unclosed-ingest": unclosedIngest,
	})
}

// TestScripts runs the CLI sessions of testdata/script/*.txtar: each is a
// transcript of commands a person would type, with what they must print.
// $EXAMPLES is the repository's examples directory; the index and the
// data directory are the script's own.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("EXAMPLES", examples)
			e.Setenv("XDG_DATA_HOME", filepath.Join(e.WorkDir, "data"))
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			return nil
		},
		UpdateScripts: os.Getenv("FLOWQ_UPDATE_SCRIPTS") != "",
	})
}
