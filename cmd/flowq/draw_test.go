package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/normalform/trace"
)

const (
	starR     = "../../examples/scenarios/geth/star_r.json"
	starRHash = "0x5e4c49d6b3a48d39d0fa594e1871daf856f678757db5de96f59ad2410248e102"
	twoPool   = "../../examples/scenarios/geth/two_pool_arb.json"
	// a whole mainnet block: 124 transactions
	block11017338 = "../../normalform/trace/testdata/corpus/mev-inspect-rs/res/11017338.data.json"
)

// draw runs drawCmd directly with the given environment.
func draw(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code = drawCmd(args, strings.NewReader(stdin), &out, &errb, lookup)
	return out.String(), errb.String(), code
}

// analysed decodes and analyses the only transaction of a file, as the
// library does it, for comparison.
func analysed(t *testing.T, path string) (*normalform.Config, *normalform.Analysis) {
	t.Helper()
	cfg := normalform.DefaultConfig()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := trace.Decode(data, trace.Options{Config: cfg})
	if len(res.Txs) != 1 || len(res.Errors) != 0 {
		t.Fatalf("%s: %d transactions, %v", path, len(res.Txs), res.Errors)
	}
	a, err := normalform.Analyze(res.Txs[0], cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, a
}

func TestDrawFileDOT(t *testing.T) {
	cfg, a := analysed(t, starR)
	out, errs, code := draw(t, nil, "", starR)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != show.TransferGraphDOT(cfg, a) {
		t.Errorf("default view is not the transfer graph:\n%.300s", out)
	}
	if errs != "" {
		t.Errorf("stderr on success: %q", errs)
	}
	// Flags after the file; the tree view; standard input.
	data, _ := os.ReadFile(starR)
	out, errs, code = draw(t, nil, string(data), "-", "--view", "tree", "--tx", strings.ToUpper(starRHash[2:]))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != show.NormalFormDOT(cfg, a) || !strings.Contains(out, "∥ 3 parallel arms (R7)") {
		t.Errorf("tree view from stdin:\n%.300s", out)
	}
	// --out FILE, format from the flag default (dot).
	file := filepath.Join(t.TempDir(), "two.gv")
	_, errs, code = draw(t, nil, "", "--out", file, twoPool, "--view=tree")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, _ := os.ReadFile(file)
	cfg2, a2 := analysed(t, twoPool)
	if string(got) != show.NormalFormDOT(cfg2, a2) || !strings.Contains(errs, "reduced tree of tx 0x3db1a776") || !strings.Contains(errs, file) {
		t.Errorf("--out: stderr %q, file %.200s", errs, got)
	}
}

func TestDrawTxSelection(t *testing.T) {
	_, errs, code := draw(t, nil, "", block11017338)
	if code != 2 || !strings.Contains(errs, "holds 124 transactions: choose one with --tx HASH (0x") || !strings.Contains(errs, "and 119 more") {
		t.Errorf("a block without --tx: exit %d: %s", code, errs)
	}
	const hash = "0x0ccb5d7e4e3a1a3e6a8a0f7bfc7fbc5ea8fae01e4bd4f4a3c4b7a2f7a5cb0000" // not in the block
	_, errs, code = draw(t, nil, "", "--tx", hash, block11017338)
	if code != 1 || !strings.Contains(errs, "no transaction "+hash) || !strings.Contains(errs, "decodes to 124 transactions") {
		t.Errorf("unknown --tx: exit %d: %s", code, errs)
	}
	// Each transaction of the block can be chosen and drawn.
	data, _ := os.ReadFile(block11017338)
	res := trace.Decode(data, trace.Options{})
	cfg := normalform.DefaultConfig()
	for _, tx := range res.Txs[:8] {
		h := tx.Meta.Hash.Hex()
		a, err := normalform.Analyze(tx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, errs, code := draw(t, nil, "", block11017338, "--tx", h)
		if code != 0 || out != show.TransferGraphDOT(cfg, a) {
			t.Errorf("--tx %s: exit %d: %s", h, code, errs)
		}
	}
}

func TestDrawFromIndex(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", idx, "--quiet", "../../examples/scenarios/geth"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	fromFile, _, _ := draw(t, nil, "", starR, "--view", "tree")
	out, errs, code := draw(t, nil, "", "--index", idx, starRHash, "--view", "tree")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out != fromFile {
		t.Errorf("the index's normal form draws differently from the trace's")
	}
	// --tx instead of the argument; a bare hash with FLOWQ_INDEX.
	graph, _, _ := draw(t, nil, "", starR)
	out, errs, code = draw(t, nil, "", "--index", idx, "--tx", starRHash)
	if code != 0 || out != graph {
		t.Errorf("--index --tx: exit %d: %s", code, errs)
	}
	out, errs, code = draw(t, map[string]string{"FLOWQ_INDEX": idx}, "", starRHash)
	if code != 0 || out != graph {
		t.Errorf("bare hash with FLOWQ_INDEX: exit %d: %s", code, errs)
	}
	// Not in the index; not a hash; no index there.
	missing := "0x" + strings.Repeat("ab", 32)
	_, errs, code = draw(t, nil, "", "--index", idx, missing)
	if code != 1 || !strings.Contains(errs, "tx "+missing+" is not in the index") {
		t.Errorf("missing tx: exit %d: %s", code, errs)
	}
	_, errs, code = draw(t, nil, "", "--index", idx, "0x1234")
	if code != 2 || !strings.Contains(errs, "is not a 32-byte hex hash") {
		t.Errorf("bad hash: exit %d: %s", code, errs)
	}
	_, errs, code = draw(t, nil, "", "--index", filepath.Join(t.TempDir(), "none"), starRHash)
	if code != 1 || !strings.Contains(errs, "no index at") {
		t.Errorf("no index: exit %d: %s", code, errs)
	}
	_, errs, code = draw(t, nil, "", "--index", idx, "--tx", missing, starRHash)
	if code != 2 || !strings.Contains(errs, "name different transactions") {
		t.Errorf("--tx and argument disagree: exit %d: %s", code, errs)
	}
}

func TestDrawBadInput(t *testing.T) {
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.json")
	data, _ := os.ReadFile(twoPool)
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	notTrace := filepath.Join(dir, "other.json")
	if err := os.WriteFile(notTrace, []byte(`{"hello": "world"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.json")}, 1, []string{"nope.json", "no such file"}},
		{"truncated trace", []string{truncated}, 1, []string{"truncated.json"}},
		{"not a trace", []string{notTrace}, 1, []string{"other.json"}},
		{"directory", []string{dir}, 2, []string{"is a directory"}},
		{"bad view", []string{"--view", "pie", twoPool}, 2, []string{`--view must be graph or tree, not "pie"`}},
		{"bad format", []string{"--format", "gif", twoPool}, 2, []string{`--format must be dot, svg or png, not "gif"`}},
		{"unknown flag", []string{"--colour", twoPool}, 2, []string{"flag provided but not defined: -colour"}},
		{"bad --tx", []string{"--tx", "xyz", twoPool}, 2, []string{"--tx:", "32-byte hex hash"}},
		{"bad chain", []string{"--chain", "atlantis", twoPool}, 2, []string{`unknown chain "atlantis"`}},
		{"no input", nil, 2, []string{"give a trace file"}},
		{"two inputs", []string{twoPool, starR}, 2, []string{"draw takes one input"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := draw(t, nil, "", tc.args...)
			t.Logf("exit %d: %s", code, errs)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q: %s", w, errs)
				}
			}
			if out != "" {
				t.Errorf("wrote to stdout on failure: %.100s", out)
			}
		})
	}
	if _, errs, code := draw(t, nil, "", "-h"); code != 0 || !strings.Contains(errs, "usage: flowq draw") {
		t.Errorf("-h: exit %d: %s", code, errs)
	}
}

// Images need Graphviz: the test takes the branch this machine allows and
// says which. A terminal as standard output is refused either way.
func TestDrawImage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "star.svg")
	_, errs, code := draw(t, nil, "", starR, "--out", out)
	if _, err := exec.LookPath("dot"); err != nil {
		t.Log("Graphviz's dot is not on PATH: checking the not-installed error")
		if code != 1 || !strings.Contains(errs, "Graphviz's dot is not installed (apt install graphviz); the DOT text can be written with --format dot") {
			t.Errorf("exit %d: %s", code, errs)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("a file was written without Graphviz")
		}
	} else {
		t.Log("Graphviz's dot is on PATH: rendering star_r for real")
		if code != 0 || !strings.Contains(errs, "(svg)") {
			t.Fatalf("exit %d: %s", code, errs)
		}
		svg, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		dec := xml.NewDecoder(bytes.NewReader(svg))
		root, titles := "", 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("not XML: %v", err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				if root == "" {
					root = se.Name.Local
				}
				if se.Name.Local == "title" {
					titles++
				}
			}
		}
		if root != "svg" || !bytes.Contains(svg, []byte("C9")) || !bytes.Contains(svg, []byte("#0 · C9")) {
			t.Errorf("root <%s>, %d titles; the cycle is not drawn", root, titles)
		}
		var png bytes.Buffer
		var perr bytes.Buffer
		if c := drawCmd([]string{"--format", "png", "--view", "tree", starR}, nil, &png, &perr, func(string) (string, bool) { return "", false }); c != 0 ||
			!bytes.HasPrefix(png.Bytes(), []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("png to a non-terminal stdout: exit %d: %s", c, perr.String())
		}
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("no pty to test the terminal check: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	go io.Copy(io.Discard, ptmx) // drain what reaches the terminal
	var errb bytes.Buffer
	code = drawCmd([]string{"--format", "png", starR}, nil, tty, &errb, func(string) (string, bool) { return "", false })
	if code != 2 || !strings.Contains(errb.String(), "--format png writes image data: give --out FILE or redirect standard output") {
		t.Errorf("png to a terminal: exit %d: %s", code, errb.String())
	}
	// DOT text to a terminal is fine.
	errb.Reset()
	if code := drawCmd([]string{twoPool}, nil, tty, &errb, func(string) (string, bool) { return "", false }); code != 0 {
		t.Errorf("dot to a terminal: exit %d: %s", code, errb.String())
	}
}
