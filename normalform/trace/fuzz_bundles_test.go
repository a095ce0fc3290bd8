package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// FuzzDecodeBundles is FuzzDecode seeded with the fetcher's shape, the
// bundles of examples/ ({"block", "receipts", "traces"} from a real node:
// block headers, receipts with logs, geth and parity traces), each whole,
// cut, and with its receipts or header alone, and run under small limits
// half of the time, so that the limit paths are fuzzed too. Decode must
// never panic, an error must have a message and an offset inside the
// input, and no transaction may exceed the limits it was decoded under.
//
//	go test ./normalform/trace/ -run '^$' -fuzz FuzzDecodeBundles -fuzztime 60s
func FuzzDecodeBundles(f *testing.F) {
	var files []string
	for _, dir := range []string{"../../examples/mainnet", "../../examples/scenarios/geth", "../../examples/scenarios/parity"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		files = append(files, m...)
	}
	if len(files) < 20 {
		f.Fatalf("only %d example bundles", len(files))
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, false)
		f.Add(data, true)
		f.Add(data[:len(data)*3/4], false)
	}
	f.Add([]byte(`{"block":{"number":"0x7","parentHash":"0x00","transactions":["0x01"]},"receipts":[{"transactionHash":"0x01","status":"0x1","logs":[]}],"traces":[]}`), false)
	f.Add([]byte(`{"block":{"number":"0x7","parentHash":"0x00","transactions":["0x01"]},"receipts":[],"traces":[{"txHash":"0x01","error":"execution timeout"}]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, small bool) {
		opt := Options{Source: "fuzz"}
		if small {
			opt.MaxBytes, opt.MaxDepth, opt.MaxTransfers = 1<<20, 3, 8
		}
		res := Decode(data, opt)
		for _, e := range res.Errors {
			if e.Msg == "" {
				t.Errorf("error without a message: %+v", e)
			}
			if e.Offset > len(data) {
				t.Errorf("error offset %d past the %d-byte input: %v", e.Offset, len(data), e)
			}
		}
		for _, tx := range res.Txs {
			if small && len(tx.Transfers) > opt.MaxTransfers {
				t.Fatalf("tx %s: %d transfers, over the limit of %d", tx.Meta.Hash.Hex(), len(tx.Transfers), opt.MaxTransfers)
			}
			if leaves := tx.Root.Leaves(nil); len(leaves)+tx.Stats.Degenerate != len(tx.Transfers) {
				t.Fatalf("tx %s: %d leaves + %d degenerate != %d transfers", tx.Meta.Hash.Hex(), len(leaves), tx.Stats.Degenerate, len(tx.Transfers))
			}
		}
	})
}

// FuzzNF is the binary encoding of normal forms (normalform.DecodeNF)
// seeded with the real corpus: every corpus transaction analysed and
// encoded, whole and cut. FuzzDecodeNF (normalform) seeds with random
// routes; this one starts from real shapes.
//
//	go test ./normalform/trace/ -run '^$' -fuzz FuzzNF -fuzztime 60s
func FuzzNF(f *testing.F) {
	files, _ := filepath.Glob("testdata/corpus/*/*/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, tx := range Decode(data, Options{}).Txs {
			a, err := normalform.Analyze(tx, normalform.DefaultConfig())
			if err != nil {
				continue
			}
			enc := normalform.EncodeNF(a)
			f.Add(enc)
			f.Add(enc[:len(enc)/2])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := normalform.DecodeNF(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		var b strings.Builder
		show.WriteAnalysis(normalform.DefaultConfig(), &b, a, true)
		again, err := normalform.DecodeNF(normalform.EncodeNF(a))
		if err != nil {
			t.Fatalf("a decoded normal form re-encodes to bytes that do not decode: %v", err)
		}
		_ = again.Hashes()
	})
}
