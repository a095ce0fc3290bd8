package trace

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// Incomplete or foreign logs (logcheck.go): a Parity trace gets its
// transfers from the logs given with it, so a log left out used to turn
// an arbitrage into nothing, silently, and a log of another transaction
// was taken as this one's. Each case below decoded without an error
// before; now the transaction fails, naming what is missing or foreign.

// incTriangular is the mainnet router arbitrage of
// examples/mainnet/triangular_arb.json (22 Parity frames, 13 logs with
// logIndex 25 to 37, no receipt), as generic values.
func incTriangular(t *testing.T) (map[string]any, string) {
	t.Helper()
	d := badParse(t, badRead(t, badParityDir+"triangular_arb.data.json")).(map[string]any)
	return d, badNode(d, "traces", 0, "transactionHash").(string)
}

// incBloom is go-ethereum's logs bloom of the given logs (generic
// values): an implementation independent of flowq's.
func incBloom(logs []any) string {
	var b types.Bloom
	for _, l := range logs {
		m := l.(map[string]any)
		b.Add(common.HexToAddress(m["address"].(string)).Bytes())
		for _, tp := range m["topics"].([]any) {
			b.Add(common.HexToHash(tp.(string)).Bytes())
		}
	}
	return hexutil.Encode(b.Bytes())
}

// incWithReceipt adds to d a receipt of the transaction (its status, gas
// and price; its logs when withLogs; a logsBloom of bloomLogs when not
// nil) and a block header (its logsBloom of headerLogs when not nil).
func incWithReceipt(d map[string]any, hash string, withLogs bool, bloomLogs, headerLogs []any) map[string]any {
	rc := map[string]any{"transactionHash": hash, "transactionIndex": "0xc", "blockNumber": "0xa9a5ac", "status": "0x1",
		"gasUsed": "0x5208", "effectiveGasPrice": "0x3b9aca00", "from": badNode(d, "traces", 0, "action", "from")}
	if withLogs {
		rc["logs"] = badCopy(d["logs"])
	}
	if bloomLogs != nil {
		rc["logsBloom"] = incBloom(bloomLogs)
	}
	block := map[string]any{"number": "0xa9a5ac", "miner": badDead, "timestamp": "0x5f93e9c1", "transactions": []any{hash}}
	if headerLogs != nil {
		block["logsBloom"] = incBloom(headerLogs)
	}
	return map[string]any{"block": block, "receipts": []any{rc}, "traces": d["traces"], "logs": d["logs"]}
}

func TestIncompleteLogs(t *testing.T) {
	orig, hash := incTriangular(t)
	all := badNode(orig, "logs").([]any)
	if len(all) != 13 {
		t.Fatalf("triangular_arb has %d logs, want 13", len(all))
	}
	keep := func(d map[string]any, idx ...int) {
		var out []any
		for _, i := range idx {
			out = append(out, all[i])
		}
		d["logs"] = out
	}
	// The valid inputs: the bundle as it is, and with a receipt (logs,
	// logsBloom) and a header (logsBloom) that agree with it.
	for name, data := range map[string][]byte{
		"as_given":           badMarshal(t, badCopy(orig)),
		"receipt_and_header": badMarshal(t, incWithReceipt(badCopy(orig).(map[string]any), hash, true, all, all)),
		"receipt_bloom_only": badMarshal(t, incWithReceipt(badCopy(orig).(map[string]any), hash, false, all, nil)),
	} {
		if res := badDecode(t, data); len(res.Errors) != 0 || len(res.Txs) != 1 || len(res.Txs[0].Transfers) != 5 {
			t.Fatalf("%s: the valid bundle decodes to %v, %d txs", name, res.Errors, len(res.Txs))
		}
	}

	cases := []struct {
		name   string
		build  func() map[string]any
		path   string
		msg    string
		at     string
		noTx   bool
		others int // transactions that still decode
	}{
		{"ten_of_13_missing_scattered", func() map[string]any {
			d := badCopy(orig).(map[string]any)
			keep(d, 0, 6, 12)
			return d
		}, "$.logs[0]", "logs are missing: the transaction's logs run from logIndex 25 to 37, but 26 to 30, 32 to 36 are not in the input (10 of 13); give all of its logs (eth_getLogs without a topic filter, or its receipt)", `{`, false, 0},
		{"last_ten_missing", func() map[string]any {
			d := badCopy(orig).(map[string]any)
			keep(d, 0, 1, 2)
			return d
		}, "$.traces[11]", "frame [6 0] called transfer of 0x33c2DA7Fd5B125E629B3950f3c38d7f721D7B30D, which returned true, but no Transfer log was emitted below it: logs are missing (give all of the transaction's logs)", `{`, false, 0},
		{"first_missing", func() map[string]any {
			d := badCopy(orig).(map[string]any)
			keep(d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
			return d
		}, "$.traces[5]", "frame [4] called transferFrom of 0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2, which returned true, but no Transfer log was emitted below it: logs are missing (give all of the transaction's logs)", `{`, false, 0},
		{"logindex_twice", func() map[string]any {
			d := badCopy(orig).(map[string]any)
			badSet(d, "0x19", "logs", 1, "logIndex")
			return d
		}, "$.logs[0]", "two logs have logIndex 25", `{`, false, 0},
		{"log_of_another_tx", func() map[string]any {
			d := badCopy(orig).(map[string]any)
			badSet(d, incOtherTx, "logs", 4, "transactionHash")
			return d
		}, "$.logs[4]", "log #4 (logIndex 29) names transaction " + incOtherTx + " in its transactionHash, which this input does not trace: a log of another transaction", `{`, false, 0},
		{"receipt_has_more_logs", func() map[string]any {
			d := incWithReceipt(badCopy(orig).(map[string]any), hash, true, nil, nil)
			d["logs"] = all[:12] // the last, a Sync, moves no token: only the receipt shows it is gone
			return d
		}, "$.receipts[0]", "the receipt lists 13 logs, the input's logs 12: logIndex 37 is missing", `{`, false, 0},
		{"receipt_log_of_another_tx", func() map[string]any {
			d := badCopy(orig).(map[string]any)
			delete(d, "logs")
			d = incWithReceipt(d, hash, false, nil, nil)
			rl := badCopy(all).([]any)
			rl[2].(map[string]any)["transactionHash"] = incOtherTx
			d["receipts"].([]any)[0].(map[string]any)["logs"] = rl
			delete(d, "logs")
			return d
		}, "$.receipts[0].logs[2]", "log #2 (logIndex 27) names transaction " + incOtherTx + " in its transactionHash, not this one: a log of another transaction", `{`, false, 0},
		{"receipt_bloom_misses_a_log", func() map[string]any {
			// Logs without logIndex (no gap to see), one of them left out:
			// the Transfer of 0x0e29…, the only log of that address.
			d := incWithReceipt(badCopy(orig).(map[string]any), hash, false, all, nil)
			var logs []any
			for i, l := range badCopy(all).([]any) {
				delete(l.(map[string]any), "logIndex")
				if i != 1 {
					logs = append(logs, l)
				}
			}
			d["logs"] = logs
			return d
		}, "$.receipts[0]", "the transaction's 12 logs do not give its receipt's logsBloom: logs are missing, or belong to another transaction", `{`, false, 0},
		{"log_not_in_header_bloom", func() map[string]any {
			// The header's bloom leaves out the last pair's Swap and
			// Sync (logIndex 36 and 37).
			return incWithReceipt(badCopy(orig).(map[string]any), hash, false, nil, all[:11])
		}, "$.logs[11]", "log #11 (logIndex 36) is not in the logsBloom of block 11117996: a log of another block", `{`, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := badMarshal(t, c.build())
			res := badDecode(t, data)
			tx := hash
			if c.noTx {
				tx = ""
			}
			badCheckAll(t, data, res, badWant{tx: tx, path: c.path, msg: c.msg, at: c.at})
			if len(res.Txs) != c.others {
				t.Errorf("%d transactions decoded, want %d", len(res.Txs), c.others)
			}
		})
	}
}

// TestForeignLogInBlock: in a block of Parity traces, a log naming a
// transaction the block does not trace is reported for the input, naming
// the log; the block's transactions still decode.
func TestForeignLogInBlock(t *testing.T) {
	doc := badParse(t, badRead(t, badBlockFile)).([]any)
	b := doc[6].(map[string]any)
	traces := b["traces"].([]any)
	// Two transactions in the bundle: its own, and a copy under another
	// hash, so that the bundle traces more than one.
	other := badCopy(traces).([]any)
	for _, f := range other {
		f.(map[string]any)["transactionHash"] = incOtherTx
	}
	b["traces"] = append(traces, other...)
	for _, l := range badCopy(b["logs"]).([]any) {
		l.(map[string]any)["transactionHash"] = incOtherTx
		badAppend(b, l, "logs")
	}
	l := badCopy(badNode(b, "logs", 0)).(map[string]any)
	l["transactionHash"] = "0x" + strings.Repeat("77", 32)
	badAppend(b, l, "logs")
	data := badMarshal(t, doc)
	res := badDecode(t, data)
	var msgs []string
	for _, e := range res.Errors {
		msgs = append(msgs, e.Error())
	}
	if len(res.Errors) != 1 || res.Errors[0].HasTx || !strings.Contains(res.Errors[0].Msg, "names transaction 0x"+strings.Repeat("77", 32)+" in its transactionHash, which this input does not trace") {
		t.Fatalf("errors: %q", msgs)
	}
	if len(res.Txs) != badBlockTxs+1 {
		t.Errorf("%d transactions decoded, want %d", len(res.Txs), badBlockTxs+1)
	}
}

// TestMalformedReceiptField: a geth bundle whose receipt has one
// malformed field (effectiveGasPrice the number 1.5) fails its
// transaction with an error naming the field. It used to decode the
// transaction as well, without the receipt ("costs unknown: the input
// has no receipt", which was false), so that an index stored a record
// worse than the input's.
func TestMalformedReceiptField(t *testing.T) {
	raw := badRead(t, "../../examples/scenarios/geth/two_pool_arb.json")
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	hash := badNode(d, "receipts", 0, "transactionHash").(string)
	if res := badDecode(t, badMarshal(t, d)); len(res.Errors) != 0 || len(res.Txs) != 1 || !res.Txs[0].Meta.HasReceipt {
		t.Fatalf("the valid bundle: %v, %d txs", res.Errors, len(res.Txs))
	}
	badSet(d, json.Number("1.5"), "receipts", 0, "effectiveGasPrice")
	data := badMarshal(t, d)
	res := badDecode(t, data)
	badCheckAll(t, data, res, badWant{tx: hash, path: "$.receipts[0].effectiveGasPrice", msg: `not an unsigned integer: "1.5"`, at: "1.5"})
	if len(res.Txs) != 0 {
		t.Errorf("%d transactions decoded: a transaction whose receipt is malformed must not decode without it", len(res.Txs))
	}
}

// incOtherTx is the hash of no transaction of the corpus.
const incOtherTx = "0x2222222222222222222222222222222222222222222222222222222222222222"
