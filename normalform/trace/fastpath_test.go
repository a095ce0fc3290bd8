package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// sameWithoutFastPaths decodes data with the decoder's shortcuts that rest
// on what it has read already (objNext's member text, parityFirst) and
// without them, and fails when the two results differ in anything:
// transactions, T0, statistics, errors and their offsets.
func sameWithoutFastPaths(t *testing.T, name string, data []byte) {
	t.Helper()
	cfg := normalform.DefaultConfig()
	with := Decode(data, Options{Config: cfg, Source: name})
	fastPaths = false
	without := Decode(data, Options{Config: cfg, Source: name})
	fastPaths = true
	if reflect.DeepEqual(with, without) {
		return
	}
	a, b := goldenT0(cfg, with), goldenT0(cfg, without)
	if a != b {
		t.Fatalf("%s: results differ with the fast paths:\n--- with\n%s\n--- without\n%s", name, clipText(a), clipText(b))
	}
	t.Fatalf("%s: results differ with the fast paths (same rendering; %d/%d txs, %d/%d errors)", name, len(with.Txs), len(without.Txs), len(with.Errors), len(without.Errors))
}

func clipText(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

// fastPathInputs are the corpus, the example scenarios, hand-made Parity
// lists whose first element starts with "action" but is not (or not only)
// a Parity frame, and damaged copies of small files and of the block.
func fastPathInputs(t testing.TB) map[string][]byte {
	in := map[string][]byte{}
	var files []string
	for _, pat := range []string{"testdata/corpus/*/*/*.json", "../../examples/scenarios/*/*.json"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 26 {
		t.Fatalf("expected the corpus and the scenarios, found %d files", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in[f] = data
		if len(data) > 64<<10 && !strings.Contains(f, "11017338") {
			continue
		}
		// Damaged copies: cut, and garbled at spaced offsets (each copy
		// breaks in a different place: keys, separators, values).
		in[f+"#half"] = data[:len(data)/2]
		step := max(len(data)/12, 1)
		for k := 0; k < 12; k++ {
			g := bytes.Clone(data)
			at := k*step + 37*k%step
			if at >= len(g) {
				break
			}
			g[at] ^= 0x5a
			in[f+"#garbled"+itoa(at)] = g
			w := bytes.Clone(data)
			if at+1 < len(w) && w[at] == ' ' {
				w[at] = '\t' // whitespace other than the memorised text's
			}
			in[f+"#ws"+itoa(at)] = w
		}
	}
	frame := func(first, extra string) string {
		return `{` + first + `"subtraces":0,"traceAddress":[],"transactionHash":"0x1111111111111111111111111111111111111111111111111111111111111111","type":"call"` + extra + `}`
	}
	action := `"action":{"callType":"call","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x1","input":"0x"},`
	log := `{"address":"0x00000000000000000000000000000000000000bb","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x00000000000000000000000000000000000000000000000000000000000000aa","0x00000000000000000000000000000000000000000000000000000000000000bb"],"data":"0x0000000000000000000000000000000000000000000000000000000000000005","logIndex":"0x0","transactionHash":"0x1111111111111111111111111111111111111111111111111111111111111111"}`
	for name, doc := range map[string]string{
		// A log whose keys also make it look like a frame: a log by classify.
		"action-and-topics": `{"traces":[` + frame(action, `,"topics":[],"address":"0x00000000000000000000000000000000000000bb","data":"0x"`) + `],"logs":[` + log + `]}`,
		// A receipt-like object with "action" first.
		"action-receipt": `{"traces":[` + frame(action, `,"cumulativeGasUsed":"0x1","status":"0x1"`) + `],"logs":[]}`,
		// A frame that fails: unknown type, bad address, truncated.
		"action-bad-type":    `{"traces":[` + strings.Replace(frame(action, ""), `"type":"call"`, `"type":"jump"`, 1) + `],"logs":[]}`,
		"action-bad-address": `{"traces":[` + strings.Replace(frame(action, ""), `0x00000000000000000000000000000000000000aa`, `0x0000000000000000000000000000000000000g`, 1) + `],"logs":[]}`,
		"action-truncated":   `{"traces":[` + frame(action, "")[:80],
		"action-deep":        `{"traces":[{"action":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}],"logs":[]}`,
		// Escaped keys: the same key text, another spelling.
		"escaped-keys": `{"traces":[` + frame(action, "") + `,` + strings.Replace(frame(action, ""), `"subtraces"`, `"sub\u0074races"`, 1) + `],"logs":[` + log + `]}`,
		"two-frames":   `{"traces":[` + frame(action, "") + `,` + frame(action, "") + `],"logs":[` + log + `]}`,
		// Member text read after a value, met again right after '{': not
		// valid there.
		"comma-first": `{"traces":[` + frame(action, "") + `,{,"type":"call"}],"logs":[]}`,
		"colon-twice": `{"traces":[` + frame(action, "") + `,` + strings.Replace(frame(action, ""), `"type":"call"`, `"type"::"call"`, 1) + `],"logs":[]}`,
	} {
		in[name] = []byte(doc)
	}
	return in
}

// TestFastPathsSame: every input decodes to the same result, errors
// included, with and without the shortcuts.
func TestFastPathsSame(t *testing.T) {
	in := fastPathInputs(t)
	if len(in) < 200 {
		t.Fatalf("only %d inputs", len(in))
	}
	for name, data := range in {
		sameWithoutFastPaths(t, name, data)
	}
}

// FuzzFastPathsSame is TestFastPathsSame on arbitrary bytes.
//
//	go test ./normalform/trace/ -run '^$' -fuzz FuzzFastPathsSame -fuzztime 60s
func FuzzFastPathsSame(f *testing.F) {
	for name, data := range fastPathInputs(f) {
		if len(data) <= 64<<10 && !strings.Contains(name, "#") {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameWithoutFastPaths(t, "fuzz", data)
	})
}

// TestDecodeConcurrent decodes the corpus from several goroutines at once
// (decoders and frame chunks come from pools shared by all Decode calls)
// and checks each result against the same file decoded alone. Run it with
// -race too.
func TestDecodeConcurrent(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*/*/*.json")
	if err != nil || len(files) < 26 {
		t.Fatalf("corpus: %d files (%v)", len(files), err)
	}
	cfg := normalform.DefaultConfig()
	inputs := make([][]byte, len(files))
	want := make([]string, len(files))
	for i, f := range files {
		if inputs[i], err = os.ReadFile(f); err != nil {
			t.Fatal(err)
		}
		want[i] = goldenT0(cfg, Decode(inputs[i], Options{Config: cfg}))
	}
	const workers = 4
	errs := make(chan string, workers*len(files))
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		go func(w int) {
			defer func() { done <- struct{}{} }()
			for k := range files {
				i := (k + w*7) % len(files) // each worker in its own order
				if got := goldenT0(cfg, Decode(inputs[i], Options{Config: cfg})); got != want[i] {
					errs <- files[i]
				}
			}
		}(w)
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	close(errs)
	for f := range errs {
		t.Errorf("%s decodes differently when decoded beside others", f)
	}
}
