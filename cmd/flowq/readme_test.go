package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlocks are the fenced blocks of README.md: their info string
// ("sh", or "") and their lines.
func readmeBlocks(t *testing.T) (blocks []struct {
	info  string
	lines []string
}) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cur *struct {
		info  string
		lines []string
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			if cur == nil {
				blocks = append(blocks, struct {
					info  string
					lines []string
				}{info: strings.TrimPrefix(line, "```")})
				cur = &blocks[len(blocks)-1]
			} else {
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, line)
		}
	}
	return blocks
}

// placeholder is a word of a README command that the reader replaces:
// DIR, URL, A..B, 0xTXHASH, FILE.
var placeholder = regexp.MustCompile(`\b(DIR|URL|FILE|ADDR)\b|A\.\.B|0xTXHASH`)

// shortened is a hash or address as README shortens it (0x3db1…dcfa).
var shortened = regexp.MustCompile(`0x[0-9a-f]+…[0-9a-f]+`)

// TestREADMECommands: the shell commands of README.md, copied as printed,
// run: every line of its sh blocks that starts with flowq (or go run
// ./cmd/flowq) and needs neither a node, a server left running nor a
// value the reader supplies, in order, in a fresh home with the
// repository's examples, exit 0. The REPL session it shows runs as a
// script, and each statement of the query language's block runs
// against the examples' index. Lines left out are logged, with why.
func TestREADMECommands(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.Symlink(examples, filepath.Join(work, "examples")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(work, "home"), "XDG_DATA_HOME=" + filepath.Join(work, "data"), "FLOWQ_NO_SERVER=1"}
	sh := func(stdin, line string) (string, string, int) {
		cmd := exec.Command("/bin/sh", "-c", line)
		cmd.Dir, cmd.Env = work, env
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	ran := 0
	for _, blk := range readmeBlocks(t) {
		if blk.info != "sh" {
			continue
		}
		for _, line := range blk.lines {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "  #"); i >= 0 { // the README's comment
				line = strings.TrimSpace(line[:i])
			}
			line = strings.Replace(line, "go run ./cmd/flowq ", "flowq ", 1)
			why := ""
			switch {
			case !strings.HasPrefix(line, "flowq "):
				why = "not a flowq command"
			case placeholder.MatchString(line):
				why = "a value the reader supplies"
			case strings.Contains(line, "--rpc"):
				why = "needs a node"
			case strings.HasPrefix(line, "flowq sql"):
				why = "needs the duckdb build (make test-duckdb runs TestSQLOverLake*)"
			case strings.HasPrefix(line, "flowq serve"):
				why = "a server that runs until stopped (TestServeClients, TestTranscriptServeIngestQuery)"
			}
			if why != "" {
				t.Logf("left out (%s): %s", why, line)
				continue
			}
			out, errs, code := sh("", line)
			ran++
			if code != 0 {
				t.Errorf("README: %s\nexit %d\n%s%s", line, code, clipText(out), clipText(errs))
			}
		}
	}
	if ran < 10 {
		t.Fatalf("only %d README commands ran: the extraction is broken", ran)
	}

	// The REPL session of "At the prompt", as a script on the index the
	// commands built.
	for _, blk := range readmeBlocks(t) {
		if len(blk.lines) == 0 || !strings.HasPrefix(blk.lines[0], "$ flowq repl") {
			continue
		}
		var script strings.Builder
		for _, l := range blk.lines[1:] {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "flowq> "), "   ...> ")
			script.WriteString(l + "\n")
		}
		out, errs, code := sh(script.String(), "flowq repl --history ''")
		if code != 0 || !strings.Contains(out, "arbitrage") || !strings.Contains(out, ".schema") {
			t.Errorf("README's REPL session: exit %d\n%s%s", code, clipText(out), clipText(errs))
		}
		ran++
	}

	// The query language's examples, one statement at a time, as printed:
	// the hashes and addresses the README shortens (0x3db1…dcfa) are
	// resolved through the index (issue 21).
	short := 0
	for _, blk := range readmeBlocks(t) {
		if blk.info != "" || len(blk.lines) == 0 || !strings.HasPrefix(blk.lines[0], "find arbitrages where") {
			continue
		}
		for _, line := range blk.lines {
			if i := strings.Index(line, "--"); i >= 0 {
				line = line[:i]
			}
			for _, st := range strings.Split(line, ";") {
				st = strings.TrimSpace(st)
				if st == "" {
					continue
				}
				out, errs, code := sh("", "flowq query '"+st+"'")
				if shortened.MatchString(st) {
					short++
				}
				if code != 0 {
					t.Errorf("README statement: %s\nexit %d\n%s%s", st, code, clipText(out), clipText(errs))
				}
			}
		}
	}
	if short < 4 {
		t.Errorf("%d README statements with shortened hashes ran, want the 4 of the query language's block", short)
	}
	t.Logf("%d README commands and sessions ran", ran)
}
