package ingest

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestBar: the one bar draws both forms (an ingest's inputs with their
// transactions, a fetch's blocks), ends its line, says when it stopped,
// and draws nothing without a writer.
func TestBar(t *testing.T) {
	var buf bytes.Buffer
	b := NewBar(&buf, 3, "blocks")
	b.Add(1)
	b.Add(2) // the total: drawn at once
	b.Done(true)
	lines := strings.Split(buf.String(), "\r")
	last := lines[len(lines)-1]
	if !regexp.MustCompile(`^\[={30}\] 3/3 blocks  [0-9.]+/s  eta -   \n$`).MatchString(last) {
		t.Errorf("fetch bar's last line %q", last)
	}

	buf.Reset()
	b = NewBar(&buf, 26, "inputs")
	b.SetTx(12, 149)
	b.Done(false)
	lines = strings.Split(buf.String(), "\r")
	last = lines[len(lines)-1]
	if !regexp.MustCompile(`^\[={13}> {16}\] 12/26 inputs  149 tx  [0-9]+ tx/s  eta \S+    stopped\n$`).MatchString(last) {
		t.Errorf("ingest bar's last line %q", last)
	}
	if n := strings.Count(buf.String(), "12/26"); n != 1 {
		t.Errorf("drawn %d times, want once (Done does not redraw a line that shows the count): %q", n, buf.String())
	}

	var none *Bar = NewBar(nil, 3, "blocks")
	if none != nil {
		t.Fatal("a bar without a writer")
	}
	none.Add(1)
	none.SetTx(1, 1)
	none.Done(true)
}
