package trace

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestLimits hits each of Options' limits and checks that the error names
// the limit and its value, that the defaults are in force when the field is
// zero, and that a negative value lifts the limit.
func TestLimits(t *testing.T) {
	chain := badGethChain(10) // 11 frames, the deepest 10 calls below the top

	t.Run("max_bytes", func(t *testing.T) {
		res := Decode(chain, Options{Source: "big.json", MaxBytes: len(chain) - 1})
		if len(res.Txs) != 0 || len(res.Errors) != 1 {
			t.Fatalf("%d txs, %d errors (%v): want the input refused whole", len(res.Txs), len(res.Errors), res.Errors)
		}
		msg := res.Errors[0].Error()
		for _, want := range []string{"big.json", fmt.Sprint(len(chain)), fmt.Sprintf("limit of %d bytes", len(chain)-1), "--max-bytes"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if res := Decode(chain, Options{MaxBytes: len(chain)}); len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Errorf("an input of exactly MaxBytes: %v", res.Errors)
		}
		if res := Decode(chain, Options{MaxBytes: -1}); len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Errorf("MaxBytes -1 (no limit): %v", res.Errors)
		}
		if DefaultMaxBytes < 256<<20 {
			t.Errorf("DefaultMaxBytes %d is below the largest mainnet bundles", DefaultMaxBytes)
		}
	})

	t.Run("max_depth", func(t *testing.T) {
		res := Decode(chain, Options{MaxDepth: 9})
		if len(res.Txs) != 0 || len(res.Errors) != 1 {
			t.Fatalf("%d txs, %d errors (%v): want the transaction refused", len(res.Txs), len(res.Errors), res.Errors)
		}
		e := res.Errors[0]
		for _, want := range []string{"nested 10 deep", "limit of 9", "--max-depth"} {
			if !strings.Contains(e.Msg, want) {
				t.Errorf("error %q does not say %q", e.Msg, want)
			}
		}
		if e.Offset < 0 || !bytes.HasPrefix(chain[e.Offset:], []byte(`{"type":"CALL"`)) {
			t.Errorf("offset %d does not point at the frame", e.Offset)
		}
		if !strings.HasSuffix(e.Path, strings.Repeat(".calls[0]", 10)) {
			t.Errorf("path %q is not the deepest frame's", e.Path)
		}
		if res := Decode(chain, Options{MaxDepth: 10}); len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Errorf("MaxDepth 10 on a trace 10 deep: %v", res.Errors)
		}
		// The EVM's limit is the ceiling: a larger MaxDepth does not lift it.
		deep := badGethChain(maxCallDepth + 1)
		res = Decode(deep, Options{MaxDepth: 1 << 20})
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Msg, fmt.Sprint(maxCallDepth)) {
			t.Errorf("MaxDepth above the EVM's: %v", res.Errors)
		}
		// Parity traces are held to the same limit.
		const h = "0x1111111111111111111111111111111111111111111111111111111111111111"
		res = Decode(badParityChain(5, h), Options{MaxDepth: 4})
		if len(res.Txs) != 0 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Msg, "limit of 4 (flowq --max-depth)") || !res.Errors[0].HasTx {
			t.Errorf("parity trace 5 deep, MaxDepth 4: %d txs, %v", len(res.Txs), res.Errors)
		}
	})

	t.Run("max_transfers", func(t *testing.T) {
		// One top frame with value and n logs: n+1 transfers.
		const n = 40
		var b strings.Builder
		b.WriteString(`{"type":"CALL","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x1","logs":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"address":"0x00000000000000000000000000000000000000cc","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x00000000000000000000000000000000000000000000000000000000000000bb","0x00000000000000000000000000000000000000000000000000000000000000dd"],"data":"0x%064x","position":"0x0"}`, i+1)
		}
		b.WriteString(`]}`)
		data := []byte(b.String())
		ok := Decode(data, Options{})
		if len(ok.Errors) != 0 || len(ok.Txs) != 1 || len(ok.Txs[0].Transfers) != n+1 {
			t.Fatalf("the default limit: %v, %d txs", ok.Errors, len(ok.Txs))
		}
		res := Decode(data, Options{MaxTransfers: n})
		if len(res.Txs) != 0 || len(res.Errors) != 1 {
			t.Fatalf("%d txs, %d errors (%v): want the transaction refused", len(res.Txs), len(res.Errors), res.Errors)
		}
		for _, want := range []string{fmt.Sprintf("more than %d transfers", n), fmt.Sprintf("limit of %d", n), "--max-transfers"} {
			if !strings.Contains(res.Errors[0].Msg, want) {
				t.Errorf("error %q does not say %q", res.Errors[0].Msg, want)
			}
		}
		if res := Decode(data, Options{MaxTransfers: n + 1}); len(res.Errors) != 0 {
			t.Errorf("exactly MaxTransfers transfers: %v", res.Errors)
		}
		if res := Decode(data, Options{MaxTransfers: -1}); len(res.Errors) != 0 {
			t.Errorf("MaxTransfers -1 (no limit): %v", res.Errors)
		}
	})
}
