package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
)

// holdIndex starts `flowq repl --allow-writes` on dir in a process of its
// own, reading statements from a pipe that stays open, and waits until it
// has the index open (it answered a query). Closing the returned pipe
// ends it; wait waits for its exit status.
func holdIndex(t *testing.T, dir string) (cmd *exec.Cmd, in io.WriteCloser, wait func() int) {
	t.Helper()
	cmd = exec.Command("flowq", "repl", "--allow-writes", "--index", dir, "--history", "")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := io.WriteString(in, "count transactions by verdict;\n"); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "verdict") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatalf("the holding repl ended without answering: %s", errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the holding repl did not answer in 30s: %s", errb.String())
	}
	return cmd, in, func() int {
		cmd.Wait()
		return cmd.ProcessState.ExitCode()
	}
}

// deadPid is the id of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// TestSharedIndex: while a REPL holds an index for writing, read-only
// commands (verify, query, export, ingest --failures, a read-only REPL)
// read a snapshot of it and say so, and ingest fails with exit status 1
// naming the holder (its pid, its command); all used to fail on Badger's
// "Cannot acquire directory lock". The holder file is removed when the
// holder ends. A holder file naming a process that no longer runs is
// reported as stale, and ignored by the next open.
func TestSharedIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", dir, "../../examples/mainnet", "../../examples/scenarios/geth"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	holderFile := filepath.Join(dir, index.HolderFile)
	if _, err := os.Stat(holderFile); !os.IsNotExist(err) {
		t.Fatalf("after a clean close the holder file is still there (%v)", err)
	}

	cmd, in, wait := holdIndex(t, dir)
	h, err := index.ReadHolder(dir)
	if err != nil || h.Pid != cmd.Process.Pid || h.Command != "flowq repl" || h.Stale {
		t.Fatalf("holder file: %+v, %v; want pid %d, flowq repl", h, err, cmd.Process.Pid)
	}
	readOnlyCommands(t, dir, demoTxs(t))
	holderText := fmt.Sprintf("in use by flowq repl (pid %d", cmd.Process.Pid)
	_, errs, code := command(t, "", "flowq", "query", "--index", dir, "count transactions by verdict")
	if code != 0 || !strings.Contains(errs, holderText) || !strings.Contains(errs, "snapshot") {
		t.Errorf("query beside the holder: exit %d, want 0 and a note naming the holder and the snapshot:\n%s", code, errs)
	}
	_, errs, code = command(t, "", "flowq", "ingest", "--index", dir, "../../examples/mainnet")
	if code != 1 || !strings.Contains(errs, holderText) || strings.Contains(errs, "Badger") {
		t.Errorf("ingest beside the holder: exit %d, want 1 and a message naming the holder:\n%s", code, errs)
	}
	// A REPL on a terminal, which opens the index for writing, reads a
	// snapshot instead, and says .ingest will not work.
	tm := startREPL(t, "flowq", []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm"}, "--index", dir, "--history", "")
	tm.expect(regexp.QuoteMeta(holderText) + `.*snapshot`)
	tm.expect(`open read-only: queries work, \.ingest does not`)
	tm.prompt()
	tm.send("count transactions by verdict;" + enter)
	tm.expect(`(?m)^verdict .*\n(.*\n)*flowq> $`)
	tm.send(ctrlD)
	if code := tm.exit(); code != 0 {
		t.Errorf("terminal REPL beside the holder: exit %d", code)
	}

	// A holder file whose process has ended, while the lock is held (by
	// a process that did not write it): stale.
	dead := deadPid(t)
	stale := fmt.Sprintf("pid %d\nhost %s\ncommand flowq ingest\nsince 2026-01-02T15:04:05Z\n", dead, hostname(t))
	if err := os.WriteFile(holderFile, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = command(t, "", "flowq", "ingest", "--index", dir, "../../examples/mainnet")
	if code != 1 || !strings.Contains(errs, fmt.Sprintf("pid %d", dead)) || !strings.Contains(errs, "stale") {
		t.Errorf("ingest beside a holder with a stale holder file: exit %d, want 1 and 'stale':\n%s", code, errs)
	}

	in.Close()
	if code := wait(); code != 0 {
		t.Fatalf("the holding repl: exit %d", code)
	}
	// The holder did not remove a file that is not its own; the next
	// ingest ignores it, and removes it when it ends.
	if h, err := index.ReadHolder(dir); err != nil || h.Pid != dead || !h.Stale {
		t.Fatalf("holder file after the holder ended: %+v, %v; want the stale one", h, err)
	}
	if _, errs, code := command(t, "", "flowq", "ingest", "--index", dir, "../../examples/mainnet"); code != 0 {
		t.Fatalf("ingest with a stale holder file: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(holderFile); !os.IsNotExist(err) {
		t.Errorf("after ingest the holder file is still there (%v)", err)
	}

	// A holder that ends cleanly removes its file.
	_, in, wait = holdIndex(t, dir)
	if _, err := os.Stat(holderFile); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if code := wait(); code != 0 {
		t.Fatalf("the holding repl: exit %d", code)
	}
	if _, err := os.Stat(holderFile); !os.IsNotExist(err) {
		t.Errorf("after the holder ended the holder file is still there (%v)", err)
	}
}

func hostname(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
