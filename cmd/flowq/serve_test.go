package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowq/flowq/repl/serve"
)

// startServe runs `flowq serve` on dir in a process of its own and waits
// for its server file.
func startServe(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("flowq", "serve", "--index", dir, "--listen", "127.0.0.1:0")
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if info, err := serve.ReadInfo(dir); err == nil && info.Pid == cmd.Process.Pid {
			return cmd
		}
	}
	t.Fatalf("flowq serve wrote no server file in 30s: %s", errb.String())
	return nil
}

// TestServeClients: with `flowq serve` holding an index, ingest, query,
// run, a REPL script, export and draw go through it and print what they
// print without it; killed with SIGKILL, it leaves a stale server file
// that the next command says is stale and removes, and an index that
// the commands and the next server open.
func TestServeClients(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	srv := startServe(t, dir)

	_, errs, code := flowq(t, nil, "", "ingest", "--index", dir, "../../examples/mainnet", "../../examples/scenarios/geth")
	if code != 0 || !strings.Contains(errs, "served by flowq serve") || !strings.Contains(errs, fmt.Sprintf("%d transactions stored", demoTxs(t))) {
		t.Fatalf("ingest through the server: exit %d: %s", code, errs)
	}
	const stmts = "count by verdict; find arbitrages order by net profit desc limit 3"
	direct := map[string]string{envNoServer: "1"}
	for _, format := range []string{"table", "json", "csv"} {
		remote, errs, code := flowq(t, nil, "", "query", "--index", dir, "--format", format, stmts)
		if code != 0 || errs != "" {
			t.Fatalf("query %s: exit %d: %s", format, code, errs)
		}
		// Without the server the index is held: a snapshot, said on stderr.
		local, _, code := flowq(t, direct, "", "query", "--index", dir, "--format", format, stmts)
		if code != 0 || remote != local || !strings.Contains(remote, "arbitrage") {
			t.Errorf("query %s through the server differs from the index's own answer:\n%s\n---\n%s", format, remote, local)
		}
	}
	_, errs, code = flowq(t, nil, "", "query", "--index", dir, "find arbitrages wher pools > 3")
	if code != 1 || !strings.Contains(errs, `flowq query: <query>:1:17: unexpected "wher"`) {
		t.Errorf("a bad statement through the server: exit %d: %s", code, errs)
	}
	out, errs, code := flowq(t, nil, "count by tier;\n", "repl", "--index", dir, "--history", "")
	if code != 0 || !strings.Contains(out, "confirmed") || !strings.Contains(errs, "statements run there") {
		t.Errorf("repl script through the server: exit %d: %s\n%s", code, out, errs)
	}
	out, errs, code = flowq(t, nil, "", "export", "--index", dir, "--format", "csv")
	if code != 0 || strings.Count(out, "\n") != demoTxs(t)+1 || !strings.Contains(errs, fmt.Sprintf("%d transactions written", demoTxs(t))) {
		t.Errorf("export through the server: exit %d: %s\n%.300s", code, errs, out)
	}
	// export --query through the server: the cells of query --format csv.
	out, errs, code = flowq(t, nil, "", "export", "--index", dir, "--query", "find arbitrages where pools >= 3")
	localCSV, _, _ := flowq(t, direct, "", "query", "--index", dir, "--format", "csv", "find arbitrages where pools >= 3")
	if code != 0 || out != localCSV || !strings.Contains(out, ",gross_token,gross_amount,") {
		t.Errorf("export --query through the server: exit %d: %s\n%.300s\n---\n%.300s", code, errs, out, localCSV)
	}
	tx := "0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa"
	// show in the JSON mode through the server: the structured analysis.
	out, errs, code = flowq(t, nil, "", "query", "--index", dir, "--format", "json", "show "+tx)
	localShow, _, _ := flowq(t, direct, "", "query", "--index", dir, "--format", "json", "show "+tx)
	if code != 0 || out != localShow || !strings.Contains(out, `"cycle_chains":[`) {
		t.Errorf("show --format json through the server: exit %d: %s\n%.300s", code, errs, out)
	}
	remoteDot, errs, code := flowq(t, nil, "", "draw", "--index", dir, "--view", "tree", tx)
	localDot, _, _ := flowq(t, direct, "", "draw", "--index", dir, "--view", "tree", tx)
	if code != 0 || remoteDot != localDot || !strings.HasPrefix(remoteDot, "digraph") {
		t.Errorf("draw through the server: exit %d: %s\n%.200s", code, errs, remoteDot)
	}

	// kill -9: the server file stays behind, naming a process that is gone.
	if err := srv.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.Wait()
	if _, err := os.Stat(filepath.Join(dir, serve.InfoFile)); err != nil {
		t.Fatalf("after kill -9 the server file is gone already: %v", err)
	}
	out, errs, code = flowq(t, nil, "", "query", "--index", dir, "count by verdict")
	if code != 0 || !strings.Contains(errs, "no longer runs: stale, ignored") || !strings.Contains(out, "arbitrage") {
		t.Fatalf("query after the server was killed: exit %d: %s\n%s", code, errs, out)
	}
	if _, err := os.Stat(filepath.Join(dir, serve.InfoFile)); !os.IsNotExist(err) {
		t.Errorf("the stale server file was not removed: %v", err)
	}
	// The next server opens the index the killed one left.
	startServe(t, dir)
	out, errs, code = flowq(t, nil, "", "query", "--index", dir, "--format", "csv", "count transactions by mode")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("traces,%d,", demoTxs(t))) {
		t.Errorf("query through the next server: exit %d: %s\n%s", code, errs, out)
	}
	if _, errs, code := flowq(t, nil, "", "serve", "--index", dir, "--listen", "127.0.0.1:0"); code != 1 || !strings.Contains(errs, "already served by") {
		t.Errorf("a second server: exit %d: %s", code, errs)
	}
}
