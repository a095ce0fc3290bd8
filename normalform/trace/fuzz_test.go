package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds Decode arbitrary bytes, seeded with every corpus file
// and truncated and garbled variants of a few. Decode must never panic,
// and every transaction it returns must be whole: the leaves of T0 plus
// the degenerate transfers trimming dropped are all its transfers, and no
// two leaves share a trace position.
//
//	go test ./normalform/trace/ -run '^$' -fuzz FuzzDecode -fuzztime 60s
//
// A crasher is written to testdata/fuzz/FuzzDecode/ and from then on runs
// as a regression test with go test.
func FuzzDecode(f *testing.F) {
	files, err := filepath.Glob("testdata/corpus/*/*/*.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no corpus files: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if len(data) > 64<<10 {
			continue // the small files give the variants: the fuzzer mutates faster
		}
		f.Add(data[:len(data)/2])
		f.Add(data[:len(data)*9/10])
		g := bytes.Clone(data)
		for i := 97; i < len(g); i += 997 {
			g[i] ^= 0x5a
		}
		f.Add(g)
	}
	// Small hand-made shapes, so that mutation starts near every reader.
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}`,
		`[{"txHash":"0x1111111111111111111111111111111111111111111111111111111111111111","result":{"type":"CALL","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x1","calls":[{"type":"DELEGATECALL","from":"0x00000000000000000000000000000000000000bb","to":"0x00000000000000000000000000000000000000cc"}],"logs":[{"address":"0x00000000000000000000000000000000000000bb","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x00000000000000000000000000000000000000000000000000000000000000aa","0x00000000000000000000000000000000000000000000000000000000000000bb"],"data":"0x0000000000000000000000000000000000000000000000000000000000000005","position":"0x1"}]}}]`,
		`{"traces":[{"action":{"callType":"call","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x0","input":"0x"},"subtraces":1,"traceAddress":[],"transactionHash":"0x1111111111111111111111111111111111111111111111111111111111111111","type":"call"},{"action":{"address":"0x00000000000000000000000000000000000000bb","refundAddress":"0x00000000000000000000000000000000000000aa","balance":"0x7"},"subtraces":0,"traceAddress":[0],"transactionHash":"0x1111111111111111111111111111111111111111111111111111111111111111","type":"suicide"}],"logs":[]}`,
		`[{"traces":[{"action":{"callType":"call","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x2","input":"0xa9059cbb00000000000000000000000000000000000000000000000000000000000000cc0000000000000000000000000000000000000000000000000000000000000001"},"subtraces":2,"traceAddress":[],"transactionHash":"0x2222222222222222222222222222222222222222222222222222222222222222","type":"call"},{"action":{"callType":"delegatecall","from":"0x00000000000000000000000000000000000000bb","to":"0x00000000000000000000000000000000000000dd","value":"0x0","input":"0x"},"subtraces":0,"traceAddress":[0],"transactionHash":"0x2222222222222222222222222222222222222222222222222222222222222222","type":"call"},{"action":{"from":"0x00000000000000000000000000000000000000bb","value":"0x0","init":"0x"},"result":{"address":"0x00000000000000000000000000000000000000ee"},"subtraces":0,"traceAddress":[1],"transactionHash":"0x2222222222222222222222222222222222222222222222222222222222222222","type":"create"}],"logs":[{"address":"0x00000000000000000000000000000000000000bb","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x00000000000000000000000000000000000000000000000000000000000000aa","0x00000000000000000000000000000000000000000000000000000000000000cc"],"data":"0x0000000000000000000000000000000000000000000000000000000000000001","logIndex":"0x0","transactionHash":"0x2222222222222222222222222222222222222222222222222222222222222222"}]}]`,
		`{"receipts":[{"transactionHash":"0x1111111111111111111111111111111111111111111111111111111111111111","status":"0x1","gasUsed":"0x5208","logs":[]}],"block":{"number":"0x1","miner":"0x00000000000000000000000000000000000000aa","transactions":[]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := Decode(data, Options{Source: "fuzz"})
		for _, e := range res.Errors {
			if e.Msg == "" {
				t.Errorf("error without a message: %+v", e)
			}
			if e.Offset > len(data) {
				t.Errorf("error offset %d past the %d-byte input: %v", e.Offset, len(data), e)
			}
		}
		for _, tx := range res.Txs {
			leaves := tx.Root.Leaves(nil)
			if len(leaves)+tx.Stats.Degenerate != len(tx.Transfers) {
				t.Fatalf("tx %s: %d leaves + %d degenerate != %d transfers", tx.Meta.Hash.Hex(), len(leaves), tx.Stats.Degenerate, len(tx.Transfers))
			}
			seen := make(map[int32]bool, len(leaves))
			for _, l := range leaves {
				if seen[l.Pos] {
					t.Fatalf("tx %s: two leaves at trace position %d", tx.Meta.Hash.Hex(), l.Pos)
				}
				seen[l.Pos] = true
			}
		}
	})
}
