package fuzzsmoke

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestQuitDumpsDescendants: quit on a process that catches SIGQUIT and
// does nothing of it, as the go command does, and runs another that blocks, as the fuzz
// coordinator did when a target stalled: the one below prints its
// goroutines into the output and exits, and so the one above ends.
// Both are this test binary, run as TestQuitHelper.
func TestQuitDumpsDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: quit signals go test only")
	}
	var out output
	cmd := exec.Command(os.Args[0], "-test.run=^TestQuitHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "FLOWQ_QUIT_HELPER=above")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(out.bytes(), []byte("below: blocking")) {
		if time.Now().After(deadline) {
			t.Fatalf("the helper below did not start:\n%s", out.bytes())
		}
		time.Sleep(10 * time.Millisecond)
	}
	state := machineState(cmd.Process.Pid)
	if err := quit(cmd.Process); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("not ended 10 s after SIGQUIT:\n%s", out.bytes())
	}
	got := string(out.bytes())
	for _, want := range []string{"SIGQUIT: quit", "goroutine ", "TestQuitHelper", "above: the one below ended"} {
		if !strings.Contains(got, want) {
			t.Errorf("the output does not say %q:\n%s", want, tailOf(out.bytes(), 4000))
		}
	}
	for _, want := range []string{"load ", "memory ", "MiB available", " S"} {
		if !strings.Contains(state, want) {
			t.Errorf("machine state %q does not say %q", state, want)
		}
	}
	t.Logf("machine state: %s", state)
}

// TestQuitHelper is TestQuitDumpsDescendants's processes: "above" catches
// SIGQUIT and runs "below", which blocks.
func TestQuitHelper(t *testing.T) {
	switch os.Getenv("FLOWQ_QUIT_HELPER") {
	case "above":
		signal.Notify(make(chan os.Signal, 1), syscall.SIGQUIT) // as the go command does
		cmd := exec.Command(os.Args[0], "-test.run=^TestQuitHelper$")
		cmd.Env = append(os.Environ(), "FLOWQ_QUIT_HELPER=below")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		err := cmd.Run()
		os.Stdout.WriteString("above: the one below ended: " + err.Error() + "\n")
	case "below":
		os.Stdout.WriteString("below: blocking\n")
		time.Sleep(time.Minute)
	default:
		t.Skip("a helper process of TestQuitDumpsDescendants")
	}
}
