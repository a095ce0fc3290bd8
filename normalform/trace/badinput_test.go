package trace

// Bad input: truncated or invalid JSON, fields of the wrong type, unknown
// frame types, logs that no frame can have emitted, numbers over 256 bits and
// nesting deeper than the EVM allows. Each case must give an error that
// names the transaction (when it can be known) and the JSON path, never a
// panic, and the other transactions of the same file must still be decoded.
//
// Every bad input is built from a real corpus file where one exists: the
// file is read with encoding/json, one part is corrupted, and the result is
// written out again. The expected errors are exact (transaction, path,
// message, and the bytes the offset points at), so that a change to any of
// them is seen. Run with -v to print the error texts.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/internal/textdiff"
)

const (
	badBlockFile = "testdata/corpus/mev-inspect-rs/res/11017338.data.json"
	badBlockTxs  = 124
	badGethDir   = "testdata/corpus/go-ethereum/call_tracer_withLog/"
	badParityDir = "testdata/corpus/mev-inspect-rs/res/"
	badSource    = "bad.json"
)

// --- helpers ------------------------------------------------------------

func badRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// badDecode runs Decode and turns a panic into a test failure.
func badDecode(t testing.TB, data []byte) (res *Result) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Decode panicked on a %d-byte input: %v\n%s", len(data), r, debug.Stack())
		}
	}()
	return Decode(data, Options{Source: badSource})
}

// badParse reads JSON into generic values, keeping numbers as written.
func badParse(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func badMarshal(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// badNode follows a path of object keys (string) and array indexes (int).
func badNode(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

// badSet sets the value at path (its last element is a key or an index).
func badSet(v any, val any, path ...any) {
	parent := badNode(v, path[:len(path)-1]...)
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = val
	case int:
		parent.([]any)[k] = val
	}
}

// badDelete removes an object key, or an array element (the array must be
// inside an object or array).
func badDelete(v any, path ...any) {
	last := path[len(path)-1]
	if k, ok := last.(string); ok {
		delete(badNode(v, path[:len(path)-1]...).(map[string]any), k)
		return
	}
	i := last.(int)
	arr := badNode(v, path[:len(path)-1]...).([]any)
	out := append(append([]any{}, arr[:i]...), arr[i+1:]...)
	badSet(v, out, path[:len(path)-1]...)
}

// badAppend appends an element to the array at path.
func badAppend(v any, val any, path ...any) {
	arr := badNode(v, path...).([]any)
	badSet(v, append(arr, val), path...)
}

// badCopy deep-copies a generic JSON value.
func badCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = badCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = badCopy(e)
		}
		return a
	}
	return v
}

// badWant is one expected error.
type badWant struct {
	tx   string // transaction hash, "" when the error names none
	path string // exact JSON path
	msg  string // exact message
	// at is what the byte offset points at: the input at the offset starts
	// with it (the value the error is about) or the input before the offset
	// ends with it (the scanner stopped after the bad value). "" means the
	// offset is not checked beyond being inside the input.
	at string
}

// badCheck compares one error with its expectation, and its Error() text
// with the text it must have.
func badCheck(t *testing.T, data []byte, e *Error, w badWant) {
	t.Helper()
	t.Logf("error text: %s", badShort(e.Error()))
	if w.tx == "" && e.HasTx {
		t.Errorf("error names tx %s, want none", e.Tx.Hex())
	}
	if w.tx != "" && (!e.HasTx || e.Tx.Hex() != w.tx) {
		t.Errorf("error names tx %v (HasTx %v), want %s", e.Tx.Hex(), e.HasTx, w.tx)
	}
	if e.Path != shortPath(w.path) { // long paths are abbreviated: TestShortPath
		t.Errorf("path %q, want %q", badShort(e.Path), badShort(shortPath(w.path)))
	}
	if e.Msg != w.msg {
		t.Errorf("message\n  %q\nwant\n  %q", e.Msg, w.msg)
	}
	if e.Source != badSource {
		t.Errorf("source %q, want %q", e.Source, badSource)
	}
	if e.Offset < 0 || e.Offset > len(data) {
		t.Errorf("offset %d outside the %d-byte input", e.Offset, len(data))
	} else if w.at != "" && !bytes.HasPrefix(data[e.Offset:], []byte(w.at)) && !bytes.HasSuffix(data[:e.Offset], []byte(w.at)) {
		t.Errorf("offset %d points at %q, want it at or just after %q", e.Offset, clip(data[max(0, e.Offset-40):min(len(data), e.Offset+40)]), w.at)
	}
	want := badSource + ": "
	if w.tx != "" {
		want += "tx " + w.tx + ": "
	}
	want += fmt.Sprintf("at %s (byte %d): %s", shortPath(w.path), e.Offset, w.msg)
	if got := e.Error(); got != want {
		t.Errorf("Error()\n  %s\nwant\n  %s", badShort(got), badShort(want))
	}
}

// badShort shortens the long runs of a deep JSON path for printing.
func badShort(s string) string {
	for _, run := range []string{"[0]", ".calls[0]", ".a"} {
		long := strings.Repeat(run, 8)
		for {
			i := strings.Index(s, long)
			if i < 0 {
				break
			}
			n := 0
			for strings.HasPrefix(s[i+n*len(run):], run) {
				n++
			}
			s = s[:i] + fmt.Sprintf("%s×%d", run, n) + s[i+n*len(run):]
		}
	}
	return s
}

// badCheckAll checks that res has exactly the errors wanted, in order.
func badCheckAll(t *testing.T, data []byte, res *Result, want ...badWant) {
	t.Helper()
	if len(res.Errors) != len(want) {
		for _, e := range res.Errors {
			t.Logf("error text: %s", badShort(e.Error()))
		}
		t.Fatalf("%d errors, want %d", len(res.Errors), len(want))
	}
	for i, w := range want {
		badCheck(t, data, res.Errors[i], w)
	}
}

// badCheckTree checks what every decoded transaction must satisfy: the
// leaves of T0 plus the degenerate transfers trimming dropped are all the
// transfers, and leaf positions are unique.
func badCheckTree(t testing.TB, res *Result) {
	t.Helper()
	for _, tx := range res.Txs {
		leaves := tx.Root.Leaves(nil)
		if len(leaves)+tx.Stats.Degenerate != len(tx.Transfers) {
			t.Errorf("tx %s: %d leaves + %d degenerate != %d transfers", tx.Meta.Hash.Hex(), len(leaves), tx.Stats.Degenerate, len(tx.Transfers))
		}
		seen := map[int32]bool{}
		for _, l := range leaves {
			if seen[l.Pos] {
				t.Errorf("tx %s: leaf position %d appears twice", tx.Meta.Hash.Hex(), l.Pos)
			}
			seen[l.Pos] = true
		}
	}
}

// badTxSummary is what the unharmed transactions must keep.
func badTxSummary(res *Result) []string {
	var out []string
	for _, tx := range res.Txs {
		out = append(out, fmt.Sprintf("%s transfers=%d frames=%d logs=%d", tx.Meta.Hash.Hex(), len(tx.Transfers), tx.Stats.Frames, tx.Stats.Logs))
	}
	return out
}

// badBlock reads 11017338.data.json as generic values, with the hash of
// each bundle's transaction.
func badBlock(t testing.TB) (orig []byte, hashes []string) {
	t.Helper()
	orig = badRead(t, badBlockFile)
	doc := badParse(t, orig).([]any)
	if len(doc) != badBlockTxs {
		t.Fatalf("%s has %d bundles, want %d", badBlockFile, len(doc), badBlockTxs)
	}
	for i := range doc {
		hashes = append(hashes, badNode(doc, i, "traces", 0, "transactionHash").(string))
	}
	return orig, hashes
}

// Values used by the corruptions.
const (
	badHex65    = "0x10000000000000000000000000000000000000000000000000000000000000000"            // 2^256: 65 hex digits
	badHexMax   = "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"             // 2^256-1: still fits
	badDec2p256 = "115792089237316195423570985008687907853269984665640564039457584007913129639936" // 2^256
	badU64Max   = "0xffffffffffffffff"
	badDead     = "0x000000000000000000000000000000000000dead"
)

// --- one transaction of a block corrupted -------------------------------

// TestBadInputBlockTx corrupts one transaction of the 124 in
// 11017338.data.json: exactly one error, naming that transaction and the
// JSON path, and the 123 others decode exactly as before.
func TestBadInputBlockTx(t *testing.T) {
	orig, hashes := badBlock(t)
	base := badDecode(t, badMarshal(t, badParse(t, orig)))
	if len(base.Txs) != badBlockTxs || len(base.Errors) != 0 {
		t.Fatalf("the re-encoded block decodes to %d txs and %d errors, want %d and 0", len(base.Txs), len(base.Errors), badBlockTxs)
	}
	baseSum := badTxSummary(base)

	type bundle = map[string]any
	cases := []struct {
		name   string
		bundle int
		mutate func(b bundle)
		path   string
		msg    string
		at     string
	}{
		{"frame_type_jump", 5, func(b bundle) { badSet(b, "jump", "traces", 1, "type") },
			"$[5].traces[1].type", `unknown frame type "jump"`, `"jump"`},
		{"frame_type_number", 5, func(b bundle) { badSet(b, json.Number("7"), "traces", 1, "type") },
			"$[5].traces[1].type", `expected a string, found a number`, `7`},
		{"frame_no_type", 17, func(b bundle) { badDelete(b, "traces", 2, "type") },
			"$[17].traces[2]", `trace frame has no "type"`, `{`},
		{"call_type_jump", 11, func(b bundle) { badSet(b, "jump", "traces", 1, "action", "callType") },
			"$[11].traces[1].action.callType", `unknown call type "jump"`, `"jump"`},
		{"call_type_create_in_call_frame", 11, func(b bundle) { badSet(b, "create", "traces", 1, "action", "callType") },
			"$[11].traces[1].action.callType", `unknown call type "create"`, `"create"`},
		{"action_not_object", 11, func(b bundle) { badSet(b, "call", "traces", 3, "action") },
			"$[11].traces[3].action", `expected an object, found a string`, `"call"`},
		{"value_65_hex_digits", 10, func(b bundle) { badSet(b, badHex65, "traces", 2, "action", "value") },
			"$[10].traces[2].action.value", `number over 256 bits: "` + badHex65 + `"`, `"` + badHex65 + `"`},
		{"value_2^256_json_number", 12, func(b bundle) { badSet(b, json.Number(badDec2p256), "traces", 0, "action", "value") },
			"$[12].traces[0].action.value", `number over 256 bits: "` + badDec2p256 + `"`, badDec2p256},
		{"value_2^256_decimal_string", 12, func(b bundle) { badSet(b, badDec2p256, "traces", 2, "action", "value") },
			"$[12].traces[2].action.value", `number over 256 bits: "` + badDec2p256 + `"`, `"` + badDec2p256 + `"`},
		{"value_negative", 15, func(b bundle) { badSet(b, json.Number("-1"), "traces", 0, "action", "value") },
			"$[15].traces[0].action.value", `negative quantity: "-1"`, `-1`},
		{"value_fraction", 15, func(b bundle) { badSet(b, json.Number("1.5"), "traces", 0, "action", "value") },
			"$[15].traces[0].action.value", `not an unsigned integer: "1.5"`, `1.5`},
		{"value_bool", 15, func(b bundle) { badSet(b, true, "traces", 0, "action", "value") },
			"$[15].traces[0].action.value", `expected a quantity (hex string or integer), found a boolean`, `true`},
		{"value_bad_hex_digit", 15, func(b bundle) { badSet(b, "0xc9f73c73g5ba233", "traces", 0, "action", "value") },
			"$[15].traces[0].action.value", `invalid hex quantity: "0xc9f73c73g5ba233"`, `"0xc9f73c73g5ba233"`},
		{"from_short_address", 16, func(b bundle) { badSet(b, "0x1234", "traces", 5, "action", "from") },
			"$[16].traces[5].action.from", `invalid address "0x1234": want 0x and 40 hex digits`, `"0x1234"`},
		{"to_number", 16, func(b bundle) { badSet(b, json.Number("1"), "traces", 5, "action", "to") },
			"$[16].traces[5].action.to", `expected a string, found a number`, `1`},
		{"trace_address_element_string", 3, func(b bundle) { badSet(b, "two", "traces", 4, "traceAddress", 2) },
			"$[3].traces[4].traceAddress[2]", `not an unsigned integer: "two"`, `"two"`},
		{"trace_address_element_object", 3, func(b bundle) { badSet(b, map[string]any{}, "traces", 4, "traceAddress", 1) },
			"$[3].traces[4].traceAddress[1]", `expected a quantity (hex string or integer), found an object`, `{}`},
		{"trace_address_string", 3, func(b bundle) { badSet(b, "0.0.0.0", "traces", 4, "traceAddress") },
			"$[3].traces[4].traceAddress", `expected an array, found a string`, `"0.0.0.0"`},
		{"trace_address_element_2^64-1", 3, func(b bundle) { badSet(b, badU64Max, "traces", 4, "traceAddress", 3) },
			"$[3].traces[4].traceAddress[3]", `number too large for a position or count: "` + badU64Max + `"`, `"` + badU64Max + `"`},
		{"subtraces_string", 11, func(b bundle) { badSet(b, "five", "traces", 0, "subtraces") },
			"$[11].traces[0].subtraces", `not an unsigned integer: "five"`, `"five"`},
		{"subtraces_too_many", 7, func(b bundle) { badSet(b, json.Number("3"), "traces", 0, "subtraces") },
			"$[7].traces[0]", `frame [] declares 3 subtraces but 2 are present (incomplete trace)`, `{`},
		{"subtraces_2^64-1", 7, func(b bundle) { badSet(b, badU64Max, "traces", 1, "subtraces") },
			"$[7].traces[1].subtraces", `number too large for a position or count: "` + badU64Max + `"`, `"` + badU64Max + `"`},
		{"drop_last_frame", 1, func(b bundle) { badDelete(b, "traces", 12) },
			"$[1].traces[11]", `frame [5] declares 1 subtraces but 0 are present (incomplete trace)`, `{`},
		{"drop_middle_frame", 6, func(b bundle) { badDelete(b, "traces", 1) },
			"$[6].traces[1]", `frame [1] is missing its sibling [0]`, `{`},
		{"drop_frame_with_children", 6, func(b bundle) { badDelete(b, "traces", 3) },
			"$[6].traces[3]", `frame [2 0] has no parent frame [2]`, `{`},
		{"drop_top_frame", 9, func(b bundle) { badDelete(b, "traces", 0) },
			"$[9].traces[0]", `the transaction has no top-level frame (traceAddress [])`, `{`},
		{"duplicate_frame", 9, func(b bundle) { badAppend(b, badCopy(badNode(b, "traces", 1)), "traces") },
			"$[9].traces[2]", `frame [0] appears twice`, `{`},
		{"duplicate_top_frame", 9, func(b bundle) { badAppend(b, badCopy(badNode(b, "traces", 0)), "traces") },
			"$[9].traces[2]", `frame [] appears twice`, `{`},
		{"log_at_address_no_frame_runs_at", 6, func(b bundle) {
			l := badCopy(badNode(b, "logs", 3)).(map[string]any)
			l["address"] = badDead
			l["logIndex"] = "0xd" // the next logIndex: a gap is an error of its own (TestIncompleteLogs)
			badAppend(b, l, "logs")
		}, "$[6].logs[4]", `log #4 (logIndex 13) of 0x000000000000000000000000000000000000dEaD: no frame of the trace runs at that address, so no frame can have emitted it`, `{`},
		{"log_topic_number", 12, func(b bundle) { badSet(b, json.Number("12345"), "logs", 0, "topics", 0) },
			"$[12].logs[0].topics[0]", `expected a string, found a number`, `12345`},
		{"log_topics_null", 12, func(b bundle) { badSet(b, nil, "logs", 1, "topics") },
			"$[12].logs[1].topics", `expected an array, found null`, `null`},
		{"log_data_bad_hex", 13, func(b bundle) { badSet(b, "0xzz", "logs", 1, "data") },
			"$[13].logs[1].data", `invalid hex data`, `"0xzz"`},
		{"log_data_odd_digits", 13, func(b bundle) { badSet(b, "0x123", "logs", 1, "data") },
			"$[13].logs[1].data", `invalid hex data: odd number of digits`, `"0x123"`},
		{"log_address_short", 16, func(b bundle) { badSet(b, "0x1234", "logs", 0, "address") },
			"$[16].logs[0].address", `invalid address "0x1234": want 0x and 40 hex digits`, `"0x1234"`},
		{"log_index_2^64-1", 16, func(b bundle) { badSet(b, badU64Max, "logs", 2, "logIndex") },
			"$[16].logs[2].logIndex", `number too large for a position or count: "` + badU64Max + `"`, `"` + badU64Max + `"`},
		{"logs_missing", 7, func(b bundle) { badDelete(b, "logs") },
			"$[7].traces[0]", `a Parity-style trace carries no logs: give the transaction's logs ("logs" from eth_getLogs, or "receipts") so that token transfers can be seen`, `{`},
		{"deep_json_in_frame", 20, func(b bundle) { badSet(b, "DEEP", "traces", 1, "junk") },
			"$[20].traces[1].junk", fmt.Sprintf("JSON nested deeper than %d levels", maxJSONDepth), `[`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := badParse(t, orig).([]any)
			c.mutate(doc[c.bundle].(map[string]any))
			data := badMarshal(t, doc)
			if c.name == "deep_json_in_frame" {
				data = bytes.Replace(data, []byte(`"DEEP"`), badDeepArray(100000), 1)
			}
			res := badDecode(t, data)
			badCheckAll(t, data, res, badWant{tx: hashes[c.bundle], path: c.path, msg: c.msg, at: c.at})
			badCheckOthers(t, res, baseSum, c.bundle)
			badCheckTree(t, res)
		})
	}
}

// TestBadInputBlockValidEdges checks that the corruptions' valid
// neighbours are not rejected: 2^256-1, quantities as decimal strings and
// JSON integers, null where null is allowed.
func TestBadInputBlockValidEdges(t *testing.T) {
	orig, hashes := badBlock(t)
	doc := badParse(t, orig).([]any)
	badSet(doc, badHexMax, 10, "traces", 3, "action", "value") // a 0-value call frame (no transfer logs below)
	badSet(doc, "0x0000000000000000000000000000000000000000000000000000000000000000000000", 10, "traces", 1, "action", "value")
	badSet(doc, "5", 11, "traces", 0, "subtraces")
	badSet(doc, json.Number("0"), 3, "traces", 4, "traceAddress", 0)
	badSet(doc, "0x0", 3, "traces", 4, "traceAddress", 1)
	badSet(doc, nil, 12, "traces", 1, "transactionPosition")
	data := badMarshal(t, doc)
	res := badDecode(t, data)
	for _, e := range res.Errors {
		t.Errorf("valid input rejected: %v", e)
	}
	if len(res.Txs) != badBlockTxs {
		t.Fatalf("%d transactions, want %d", len(res.Txs), badBlockTxs)
	}
	badCheckTree(t, res)
	for _, tx := range res.Txs {
		if tx.Meta.Hash.Hex() != hashes[10] {
			continue
		}
		for _, tr := range tx.Transfers {
			if tr.Amount.Eq(badU256Max()) {
				return
			}
		}
		t.Errorf("tx %s: no transfer of 2^256-1", tx.Meta.Hash.Hex())
	}
}

// TestBadInputBlockTxUnknown corrupts a frame so that its transaction
// cannot be read from it: the frame's error names no transaction, and the
// transaction, read from its other frames, is reported incomplete. The
// other 123 transactions decode.
func TestBadInputBlockTxUnknown(t *testing.T) {
	orig, hashes := badBlock(t)
	cases := []struct {
		name   string
		bundle int
		mutate func(b map[string]any)
		want   []badWant
	}{
		{"frame_is_a_number", 9, func(b map[string]any) { badSet(b, json.Number("5"), "traces", 0) }, []badWant{
			{path: "$[9].traces[0]", msg: "expected an object, found a number", at: "5"},
			{tx: hashes[9], path: "$[9].traces[1]", msg: "the transaction has no top-level frame (traceAddress [])", at: "{"}}},
		{"frame_tx_hash_short", 7, func(b map[string]any) { badSet(b, "0x1234", "traces", 2, "transactionHash") }, []badWant{
			{path: "$[7].traces[2].transactionHash", msg: `invalid hash "0x1234": want 0x and 64 hex digits`, at: `"0x1234"`},
			{tx: hashes[7], path: "$[7].traces[0]", msg: "frame [] declares 2 subtraces but 1 are present (incomplete trace)", at: "{"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := badParse(t, orig).([]any)
			c.mutate(doc[c.bundle].(map[string]any))
			data := badMarshal(t, doc)
			res := badDecode(t, data)
			badCheckAll(t, data, res, c.want...)
			if len(res.Txs) != badBlockTxs-1 {
				t.Fatalf("%d transactions decoded, want the %d others", len(res.Txs), badBlockTxs-1)
			}
		})
	}
}

// badTraceBlock merges the 124 bundles of 11017338.data.json into one, as
// trace_block and eth_getLogs return a block: every frame in one list,
// every log in another. It returns the index in the merged list of each
// bundle's first frame and first log.
func badTraceBlock(t testing.TB, orig []byte) (doc map[string]any, firstFrame, firstLog []int) {
	t.Helper()
	var traces, logs []any
	for _, b := range badParse(t, orig).([]any) {
		firstFrame = append(firstFrame, len(traces))
		firstLog = append(firstLog, len(logs))
		traces = append(traces, badNode(b, "traces").([]any)...)
		logs = append(logs, badNode(b, "logs").([]any)...)
	}
	return map[string]any{"traces": traces, "logs": logs}, firstFrame, firstLog
}

// TestBadInputTraceBlock corrupts one transaction of a whole block given
// as one trace list and one log list: the other 123 still decode.
func TestBadInputTraceBlock(t *testing.T) {
	orig, hashes := badBlock(t)
	doc, ff, fl := badTraceBlock(t, orig)
	base := badDecode(t, badMarshal(t, doc))
	if len(base.Txs) != badBlockTxs || len(base.Errors) != 0 {
		t.Fatalf("the merged block decodes to %d txs and %d errors, want %d and 0", len(base.Txs), len(base.Errors), badBlockTxs)
	}
	baseSum := badTxSummary(base)
	cases := []struct {
		name   string
		bundle int
		mutate func(d map[string]any)
		path   string
		msg    string
		at     string
	}{
		{"frame_type_jump", 5, func(d map[string]any) { badSet(d, "jump", "traces", ff[5]+1, "type") },
			fmt.Sprintf("$.traces[%d].type", ff[5]+1), `unknown frame type "jump"`, `"jump"`},
		{"value_65_hex_digits", 10, func(d map[string]any) { badSet(d, badHex65, "traces", ff[10]+2, "action", "value") },
			fmt.Sprintf("$.traces[%d].action.value", ff[10]+2), `number over 256 bits: "` + badHex65 + `"`, `"` + badHex65 + `"`},
		{"log_data_bad_hex", 13, func(d map[string]any) { badSet(d, "0xzz", "logs", fl[13]+1, "data") },
			fmt.Sprintf("$.logs[%d].data", fl[13]+1), `invalid hex data`, `"0xzz"`},
		{"drop_last_frame_of_tx", 1, func(d map[string]any) { badDelete(d, "traces", ff[1]+12) },
			fmt.Sprintf("$.traces[%d]", ff[1]+11), `frame [5] declares 1 subtraces but 0 are present (incomplete trace)`, `{`},
		{"log_at_address_no_frame_runs_at", 6, func(d map[string]any) { badSet(d, badDead, "logs", fl[6]+2, "address") },
			fmt.Sprintf("$.logs[%d]", fl[6]+2), `log #2 (logIndex 11) of 0x000000000000000000000000000000000000dEaD: no frame of the trace runs at that address, so no frame can have emitted it`, `{`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _, _ := badTraceBlock(t, orig)
			c.mutate(d)
			data := badMarshal(t, d)
			res := badDecode(t, data)
			badCheckAll(t, data, res, badWant{tx: hashes[c.bundle], path: c.path, msg: c.msg, at: c.at})
			badCheckOthers(t, res, baseSum, c.bundle)
			badCheckTree(t, res)
		})
	}
	t.Run("truncated", func(t *testing.T) {
		// Cut inside the log list: every transaction may lack logs, so
		// none is decoded, and the one error is the truncation.
		data := badMarshal(t, doc)
		cut := bytes.Index(data, []byte(`"logs"`)) + 5000
		data = data[:cut:cut]
		res := badDecode(t, data)
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Msg, "truncated JSON?") || len(res.Txs) != 0 {
			t.Fatalf("%d errors (%v) and %d txs, want one error about the end of input and none", len(res.Errors), res.Errors, len(res.Txs))
		}
		t.Logf("error text: %v", res.Errors[0])
	})
}

// --- truncation -----------------------------------------------------------

// badSpans returns the start and end offsets of the elements of the
// top-level array in data, and the offset just after the array.
func badSpans(t testing.TB, data []byte) (starts, ends []int, arrayEnd int) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		t.Fatalf("not an array: %v %v", tok, err)
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		end := int(dec.InputOffset())
		ends = append(ends, end)
		starts = append(starts, end-len(raw))
	}
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	return starts, ends, int(dec.InputOffset())
}

// TestBadInputTruncatedBlock cuts 11017338.data.json at chosen offsets and
// at every 3001st byte: the bundles wholly before the cut decode, and there
// is exactly one error, about the end of input.
func TestBadInputTruncatedBlock(t *testing.T) {
	orig, hashes := badBlock(t)
	starts, ends, arrayEnd := badSpans(t, orig)
	if len(starts) != badBlockTxs || arrayEnd != len(orig) {
		t.Fatalf("%d elements ending at %d of %d bytes", len(starts), arrayEnd, len(orig))
	}
	// kept is the number of bundles wholly before the cut.
	kept := func(cut int) int {
		n := 0
		for n < len(ends) && ends[n] <= cut {
			n++
		}
		return n
	}
	// Cuts with their exact error.
	inString := bytes.Index(orig[starts[57]:], []byte(`"transactionHash": "0x`)) + starts[57] + 30
	inNumber := bytes.Index(orig[starts[57]:], []byte(`"blockNumber": 110`)) + starts[57] + 18
	inNull := bytes.Index(orig[starts[57]:], []byte(`"error": nu`)) + starts[57] + 11
	named := []struct {
		name string
		cut  int
		want badWant
	}{
		{"empty", 0, badWant{path: "$", msg: "unexpected end of input: expected a JSON object or array (truncated JSON?)"}},
		{"open_bracket", 1, badWant{path: "$[0]", msg: "unexpected end of input: expected an array element (truncated JSON?)"}},
		{"inside_first_bundle", starts[0] + 20, badWant{path: "$[0].traces", msg: "unexpected end of input inside an array (truncated JSON?)"}},
		{"after_bundle_9", ends[9], badWant{path: "$[9]", msg: "unexpected end of input: expected ',' or ']' (truncated JSON?)"}},
		{"after_comma_of_bundle_9", ends[9] + 1, badWant{path: "$[10]", msg: "unexpected end of input: expected an array element (truncated JSON?)"}},
		{"in_tx_hash_string_of_bundle_57", inString, badWant{tx: "", path: "$[57].traces[0].transactionHash", msg: "unterminated string (truncated JSON?)"}},
		{"in_block_number_of_bundle_57", inNumber, badWant{tx: hashes[57], path: "$[57].traces[0].blockNumber", msg: "unexpected end of input: expected ',' or '}' (truncated JSON?)"}},
		{"in_null_literal_of_bundle_57", inNull, badWant{tx: hashes[57], path: "$[57].traces[0].error", msg: "unexpected end of input inside null (truncated JSON?)"}},
		{"before_closing_bracket", len(orig) - 1, badWant{path: "$[123]", msg: "unexpected end of input: expected ',' or ']' (truncated JSON?)"}},
	}
	for _, c := range named {
		t.Run(c.name, func(t *testing.T) {
			data := orig[:c.cut:c.cut]
			res := badDecode(t, data)
			badCheckAll(t, data, res, c.want)
			if len(res.Txs) != kept(c.cut) {
				t.Errorf("%d transactions decoded, want the %d bundles before the cut", len(res.Txs), kept(c.cut))
			}
			for i, tx := range res.Txs {
				if tx.Meta.Hash.Hex() != hashes[i] {
					t.Errorf("tx %d is %s, want %s", i, tx.Meta.Hash.Hex(), hashes[i])
				}
			}
		})
	}
	t.Run("every_3001st_byte", func(t *testing.T) {
		for cut := 0; cut < len(orig); cut += 3001 {
			data := orig[:cut:cut]
			res := badDecode(t, data)
			if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Msg, "truncated JSON?") {
				for _, e := range res.Errors {
					t.Logf("error text: %s", badShort(e.Error()))
				}
				t.Fatalf("cut at %d: %d errors, want one about the end of input", cut, len(res.Errors))
			}
			if len(res.Txs) != kept(cut) {
				t.Fatalf("cut at %d: %d transactions, want the %d bundles before the cut (error: %v)", cut, len(res.Txs), kept(cut), res.Errors[0])
			}
			badCheckTree(t, res)
		}
	})
}

// TestBadInputTruncatedSingle cuts single-transaction files (a Parity
// bundle, a go-ethereum tracer test) at every 211th byte: exactly one
// error about the end of input and no transaction.
func TestBadInputTruncatedSingle(t *testing.T) {
	for _, f := range []string{badParityDir + "triangular_arb.data.json", badGethDir + "delegatecall.json", badGethDir + "simple.json"} {
		orig := badRead(t, f)
		for cut := 0; cut < len(bytes.TrimRight(orig, " \n")); cut += 211 {
			data := orig[:cut:cut]
			res := badDecode(t, data)
			if len(res.Errors) != 1 || len(res.Txs) != 0 || !strings.Contains(res.Errors[0].Msg, "truncated JSON?") {
				for _, e := range res.Errors {
					t.Logf("error text: %s", badShort(e.Error()))
				}
				t.Fatalf("%s cut at %d: %d errors and %d txs, want one error about the end of input and none", f, cut, len(res.Errors), len(res.Txs))
			}
		}
		half := len(orig) / 2
		t.Logf("error text: %v", badDecode(t, orig[:half:half]).Errors[0])
	}
}

// --- garbage --------------------------------------------------------------

// TestBadInputGarbage puts garbage bytes into 11017338.data.json.
func TestBadInputGarbage(t *testing.T) {
	orig, hashes := badBlock(t)
	// marked re-encodes the block with "MARK" in place of one value, then
	// replaces the quoted marker with raw bytes.
	marked := func(t *testing.T, raw string, path ...any) []byte {
		doc := badParse(t, orig)
		badSet(doc, "MARK", path...)
		data := badMarshal(t, doc)
		return bytes.Replace(data, []byte(`"MARK"`), []byte(raw), 1)
	}
	cases := []struct {
		name string
		data func(t *testing.T) []byte
		txs  int
		want []badWant
	}{
		{"garbage_value_in_frame", func(t *testing.T) []byte { return marked(t, "@#!", 30, "traces", 0, "action", "value") },
			badBlockTxs - 1, []badWant{{tx: hashes[30], path: "$[30].traces[0].action.value", msg: "expected a quantity (hex string or integer), found the character '@'", at: "@#!"}}},
		{"nul_bytes_in_frame", func(t *testing.T) []byte { return marked(t, "\x00\xff", 30, "traces", 0, "action", "gas") },
			badBlockTxs - 1, []badWant{{tx: hashes[30], path: "$[30].traces[0].action.gas", msg: "expected a value, found the character '\\x00'", at: "\x00\xff"}}},
		{"missing_colon_in_frame", func(t *testing.T) []byte {
			return bytes.Replace(marked(t, `"MARK2"`, 30, "traces", 0, "action", "value"), []byte(`"value": "MARK2"`), []byte(`"value" "0x0"`), 1)
		}, badBlockTxs - 1, []badWant{{tx: hashes[30], path: "$[30].traces[0].action.value", msg: "expected ':', found a string", at: `"0x0"`}}},
		{"garbage_between_bundles", func(t *testing.T) []byte {
			return bytes.Replace(marked(t, `"MARK2"`, 40, "logs"), []byte(`"logs": "MARK2"`), []byte(`"logs": []}, @@@, {"logs": []`), 1)
		}, 40, []badWant{{path: "$[41]", msg: "expected an object, found the character '@'", at: "@@@"}}},
		{"unbalanced_bracket_in_frame", func(t *testing.T) []byte { return marked(t, `]`, 30, "traces", 0, "action", "value") },
			30, []badWant{{path: "$[30].traces[0].action", msg: "mismatched ']'", at: "]"}}},
		{"garbage_before", func(t *testing.T) []byte { return append([]byte("xyz"), orig...) },
			0, []badWant{{path: "$", msg: "expected a JSON object or array, found the character 'x'", at: "xyz"}}},
		{"utf8_bom_before", func(t *testing.T) []byte { return append([]byte("\xef\xbb\xbf"), orig...) },
			0, []badWant{{path: "$", msg: "expected a JSON object or array, found the character 'ï'", at: "\xef"}}},
		{"garbage_after", func(t *testing.T) []byte { return append(append([]byte{}, orig...), "xyz"...) },
			badBlockTxs, []badWant{{path: "$", msg: "the character 'x' after the end of the JSON value", at: "xyz"}}},
		{"second_document_after", func(t *testing.T) []byte { return append(append([]byte{}, orig...), "\n{}"...) },
			badBlockTxs, []badWant{{path: "$", msg: "an object after the end of the JSON value", at: "{}"}}},
		{"nul_after", func(t *testing.T) []byte { return append(append([]byte{}, orig...), "\x00junk"...) },
			badBlockTxs, []badWant{{path: "$", msg: "the character '\\x00' after the end of the JSON value", at: "\x00junk"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.data(t)
			res := badDecode(t, data)
			badCheckAll(t, data, res, c.want...)
			if len(res.Txs) != c.txs {
				t.Errorf("%d transactions decoded, want %d", len(res.Txs), c.txs)
			}
			badCheckTree(t, res)
		})
	}
	t.Run("random_bytes", func(t *testing.T) {
		r := rand.New(rand.NewSource(1))
		for n := 0; n < 200; n++ {
			data := make([]byte, r.Intn(300))
			r.Read(data)
			if n%2 == 0 && len(data) > 0 {
				data[0] = "[{"[n%4/2]
			}
			res := badDecode(t, data)
			if len(res.Errors) == 0 && len(data) > 0 {
				t.Errorf("%q: no error", data)
			}
			badCheckTree(t, res)
		}
	})
	t.Run("garbage_overwrites", func(t *testing.T) {
		// Overwrite 8 bytes at spread offsets with garbage: never a panic,
		// and no transaction decoded twice.
		r := rand.New(rand.NewSource(2))
		for off := 1; off < len(orig); off += 7919 {
			data := append([]byte{}, orig...)
			for k := 0; k < 8 && off+k < len(data); k++ {
				data[off+k] = byte(r.Intn(256))
			}
			res := badDecode(t, data)
			seen := map[string]bool{}
			for _, tx := range res.Txs {
				if seen[tx.Meta.Hash.Hex()] {
					t.Errorf("offset %d: tx %s decoded twice", off, tx.Meta.Hash.Hex())
				}
				seen[tx.Meta.Hash.Hex()] = true
			}
			// Garbage inside a string the decoder does not read (a
			// blockHash, an output) goes unseen; anything else is an error.
			if len(res.Errors) == 0 && len(res.Txs) != badBlockTxs {
				t.Errorf("offset %d: %d transactions and no error", off, len(res.Txs))
			}
			badCheckTree(t, res)
		}
	})
}

// TestBadInputNotJSON feeds inputs that are no trace at all.
func TestBadInputNotJSON(t *testing.T) {
	cases := []struct {
		name string
		data string
		want []badWant
	}{
		{"empty", "", []badWant{{path: "$", msg: "unexpected end of input: expected a JSON object or array (truncated JSON?)"}}},
		{"whitespace", " \n\t ", []badWant{{path: "$", msg: "unexpected end of input: expected a JSON object or array (truncated JSON?)"}}},
		{"null", "null", []badWant{{path: "$", msg: "expected a JSON object or array, found null", at: "null"}}},
		{"number", "42", []badWant{{path: "$", msg: "expected a JSON object or array, found a number", at: "42"}}},
		{"string", `"0xabc"`, []badWant{{path: "$", msg: "expected a JSON object or array, found a string", at: `"0xabc"`}}},
		{"html", "<html>502 Bad Gateway</html>", []badWant{{path: "$", msg: "expected a JSON object or array, found the character '<'", at: "<html>"}}},
		{"unknown_object", `{"foo": 1}`, []badWant{{path: "$", msg: "unrecognised object: not a trace frame, receipt, log, block or bundle", at: `{"foo"`}}},
		{"list_of_a_number_and_an_unknown_object", `[1, {"foo": 2}]`, []badWant{
			{path: "$[0]", msg: "expected an object, found a number", at: `1, {`},
			{path: "$[1]", msg: "unrecognised object: not a trace frame, receipt, log, block or bundle", at: `{"foo"`}}},
		// Receipts alone are read in receipts-only mode (receipts.go,
		// TestReceiptsOnly); logs and a header listing only hashes say
		// nothing of who sent what.
		{"logs_without_senders", `{"block": {"number": "0x1", "miner": "0x0000000000000000000000000000000000000001", "transactions": ["0x1111111111111111111111111111111111111111111111111111111111111111"]}, "logs": []}`,
			[]badWant{{path: "$", msg: "the input has no trace, and neither receipts nor a block with its transactions (eth_getBlockByNumber with full transactions) beside its logs: nothing to say who sent what", at: `{"block"`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.data)
			res := badDecode(t, data)
			badCheckAll(t, data, res, c.want...)
			if len(res.Txs) != 0 {
				t.Errorf("%d transactions decoded from no trace", len(res.Txs))
			}
		})
	}
}

// --- JSON-RPC envelopes ---------------------------------------------------

// TestBadInputRPCError decodes JSON-RPC error responses, alone and in a
// batch beside a good response.
func TestBadInputRPCError(t *testing.T) {
	simple := badParse(t, badRead(t, badGethDir+"simple.json"))
	good := map[string]any{"jsonrpc": "2.0", "id": json.Number("1"), "result": badNode(simple, "result")}
	bad := map[string]any{"jsonrpc": "2.0", "id": json.Number("2"), "error": map[string]any{"code": json.Number("-32000"), "message": "header not found"}}
	cases := []struct {
		name string
		doc  any
		txs  int
		want badWant
	}{
		{"error_alone", bad, 0, badWant{path: "$.error", msg: "the node answered with a JSON-RPC error: header not found", at: `{`}},
		{"error_in_batch", []any{good, bad}, 1, badWant{path: "$[1].error", msg: "the node answered with a JSON-RPC error: header not found", at: `{`}},
		{"error_first_in_batch", []any{bad, good}, 1, badWant{path: "$[0].error", msg: "the node answered with a JSON-RPC error: header not found", at: `{`}},
		{"error_string", map[string]any{"jsonrpc": "2.0", "id": json.Number("3"), "error": "rate limited"}, 0,
			badWant{path: "$.error", msg: "the node answered with a JSON-RPC error: rate limited", at: `"rate limited"`}},
		{"error_message_number", map[string]any{"jsonrpc": "2.0", "id": json.Number("3"), "error": map[string]any{"code": json.Number("-32000"), "message": json.Number("5")}}, 0,
			badWant{path: "$.error", msg: "the node answered with a JSON-RPC error: 5", at: `{`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := badMarshal(t, c.doc)
			res := badDecode(t, data)
			badCheckAll(t, data, res, c.want)
			if len(res.Txs) != c.txs {
				t.Errorf("%d transactions decoded, want %d", len(res.Txs), c.txs)
			}
			badCheckTree(t, res)
		})
	}
}

// --- Parity traces without logs ------------------------------------------

// TestBadInputParityNoLogs: a Parity trace is not enough to see token
// transfers; without logs or receipts the transaction is an error.
func TestBadInputParityNoLogs(t *testing.T) {
	doc := badParse(t, badRead(t, badParityDir+"triangular_arb.data.json")).(map[string]any)
	hash := badNode(doc, "traces", 0, "transactionHash").(string)
	const msg = `a Parity-style trace carries no logs: give the transaction's logs ("logs" from eth_getLogs, or "receipts") so that token transfers can be seen`
	cases := []struct {
		name string
		doc  any
		path string
	}{
		{"bundle_without_logs", map[string]any{"traces": doc["traces"]}, "$.traces[0]"},
		{"bare_trace_list", doc["traces"], "$[0]"},
		{"rpc_result", map[string]any{"jsonrpc": "2.0", "id": json.Number("1"), "result": doc["traces"]}, "$.result[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := badMarshal(t, c.doc)
			res := badDecode(t, data)
			badCheckAll(t, data, res, badWant{tx: hash, path: c.path, msg: msg, at: `{`})
			if len(res.Txs) != 0 {
				t.Errorf("%d transactions decoded, want none", len(res.Txs))
			}
		})
	}
}

// TestBadInputReceipts gives a Parity trace its logs through a receipt and
// a block header, then corrupts them: a bad receipt is charged to its
// transaction, a bad header to no transaction (the transaction still
// decodes, without the header's data).
func TestBadInputReceipts(t *testing.T) {
	orig := badParse(t, badRead(t, badParityDir+"triangular_arb.data.json")).(map[string]any)
	hash := badNode(orig, "traces", 0, "transactionHash").(string)
	build := func() map[string]any {
		d := badCopy(orig).(map[string]any)
		receipt := map[string]any{"transactionHash": hash, "transactionIndex": "0x0", "blockNumber": "0x8a5b2f", "status": "0x1",
			"gasUsed": "0x5208", "effectiveGasPrice": "0x3b9aca00", "from": badNode(d, "traces", 0, "action", "from"), "logs": d["logs"]}
		block := map[string]any{"number": "0x8a5b2f", "miner": badDead, "timestamp": "0x5e000000", "transactions": []any{hash}}
		return map[string]any{"block": block, "receipts": []any{receipt}, "traces": d["traces"]}
	}
	good := badDecode(t, badMarshal(t, build()))
	if len(good.Errors) != 0 || len(good.Txs) != 1 || !good.Txs[0].Meta.HasReceipt || !good.Txs[0].Meta.HasHeader {
		t.Fatalf("the valid bundle decodes to %d errors (%v), %d txs", len(good.Errors), good.Errors, len(good.Txs))
	}
	cases := []struct {
		name   string
		mutate func(d map[string]any)
		txs    int
		want   badWant
	}{
		{"receipt_status_2", func(d map[string]any) { badSet(d, "0x2", "receipts", 0, "status") }, 0,
			badWant{tx: hash, path: "$.receipts[0].status", msg: "receipt status must be 0 or 1", at: `"0x2"`}},
		{"receipt_gas_used_over_64_bits", func(d map[string]any) { badSet(d, "0x10000000000000000", "receipts", 0, "gasUsed") }, 0,
			badWant{tx: hash, path: "$.receipts[0].gasUsed", msg: "number does not fit in 64 bits", at: `"0x10000000000000000"`}},
		{"receipt_log_topic_short", func(d map[string]any) { badSet(d, "0xabc", "receipts", 0, "logs", 3, "topics", 1) }, 0,
			badWant{tx: hash, path: "$.receipts[0].logs[3].topics[1]", msg: `invalid hash "0xabc": want 0x and 64 hex digits`, at: `"0xabc"`}},
		{"receipt_without_hash", func(d map[string]any) { badDelete(d, "receipts", 0, "transactionHash") }, 0,
			badWant{tx: hash, path: "$.traces[0]", msg: `a Parity-style trace carries no logs: give the transaction's logs ("logs" from eth_getLogs, or "receipts") so that token transfers can be seen`, at: `{`}},
		{"block_number_string", func(d map[string]any) { badSet(d, "latest", "block", "number") }, 1,
			badWant{path: "$.block.number", msg: `not an unsigned integer: "latest"`, at: `"latest"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := build()
			c.mutate(d)
			data := badMarshal(t, d)
			res := badDecode(t, data)
			if c.name == "receipt_without_hash" {
				// The receipt is an error of its own (it names no
				// transaction), and the transaction then has no logs.
				badCheckAll(t, data, res, badWant{path: "$.receipts[0]", msg: "receipt has no transactionHash", at: `{`}, c.want)
			} else {
				badCheckAll(t, data, res, c.want)
			}
			if len(res.Txs) != c.txs {
				t.Errorf("%d transactions decoded, want %d", len(res.Txs), c.txs)
			}
			badCheckTree(t, res)
		})
	}
}

// --- go-ethereum callTracer frames ---------------------------------------

// badTracetest reads a go-ethereum tracer test file and the hash of its
// transaction (the Keccak hash of the raw signed transaction).
func badTracetest(t testing.TB, name string) (map[string]any, string) {
	t.Helper()
	doc := badParse(t, badRead(t, badGethDir+name)).(map[string]any)
	raw, err := hex.DecodeString(strings.TrimPrefix(doc["input"].(string), "0x"))
	if err != nil {
		t.Fatal(err)
	}
	return doc, crypto.Keccak256Hash(raw).Hex()
}

// TestBadInputGeth corrupts go-ethereum callTracer traces.
func TestBadInputGeth(t *testing.T) {
	type doc = map[string]any
	cases := []struct {
		name   string
		file   string
		mutate func(d doc)
		noTx   bool // the transaction cannot be known
		path   string
		msg    string
		at     string
	}{
		{"frame_type_jump", "multi_contracts.json", func(d doc) { badSet(d, "JUMP", "result", "calls", 9, "calls", 7, "type") },
			false, "$.result.calls[9].calls[7].type", `unknown frame type "JUMP"`, `"JUMP"`},
		{"top_frame_no_type", "simple.json", func(d doc) { badDelete(d, "result", "type") },
			false, "$.result", `call frame has no "type"`, `{`},
		{"value_65_hex_digits", "delegatecall.json", func(d doc) { badSet(d, badHex65, "result", "calls", 3, "value") },
			false, "$.result.calls[3].value", `number over 256 bits: "` + badHex65 + `"`, `"` + badHex65 + `"`},
		{"from_number", "delegatecall.json", func(d doc) { badSet(d, json.Number("42"), "result", "calls", 0, "from") },
			false, "$.result.calls[0].from", `expected a string, found a number`, `42`},
		{"calls_string", "notopic.json", func(d doc) { badSet(d, "none", "result", "calls", 8, "calls") },
			false, "$.result.calls[8].calls", `expected an array, found a string`, `"none"`},
		{"call_not_object", "notopic.json", func(d doc) { badSet(d, json.Number("5"), "result", "calls", 8, "calls", 2) },
			false, "$.result.calls[8].calls[2]", `expected an object, found a number`, `5`},
		{"log_position_past_calls", "notopic.json", func(d doc) { badSet(d, "0x5", "result", "calls", 8, "logs", 0, "position") },
			false, "$.result.calls[8].logs[0]", `log position 5 is past the frame's 4 calls: no frame can have emitted it`, `{`},
		{"log_position_past_no_calls", "simple.json", func(d doc) { badSet(d, "0x1", "result", "logs", 0, "position") },
			false, "$.result.logs[0]", `log position 1 is past the frame's 0 calls: no frame can have emitted it`, `{`},
		{"log_position_2^64-1", "simple.json", func(d doc) { badSet(d, badU64Max, "result", "logs", 0, "position") },
			false, "$.result.logs[0].position", `number too large for a position or count: "` + badU64Max + `"`, `"` + badU64Max + `"`},
		{"log_position_before_previous", "notopic.json", func(d doc) {
			l := badCopy(badNode(d, "result", "logs", 0)).(map[string]any)
			l["position"] = "0x1"
			badAppend(d, l, "result", "logs")
		}, false, "$.result.logs[1]", `log position 1 comes before the position 2 of the log before it: logs must be in execution order`, `{`},
		{"log_without_position", "simple.json", func(d doc) { badDelete(d, "result", "logs", 0, "position") },
			false, "$.result.logs[0]", `log in a call frame has no "position" (trace it with callTracer and withLog)`, `}`},
		{"log_topic_short", "notopic.json", func(d doc) { badSet(d, "0x01", "result", "calls", 8, "logs", 0, "topics", 0) },
			false, "$.result.calls[8].logs[0].topics[0]", `invalid hash "0x01": want 0x and 64 hex digits`, `"0x01"`},
		{"tx_input_bad_hex", "simple.json", func(d doc) { badSet(d, "0xf8zz", "input") },
			true, "$.input", `invalid hex data`, ``},
		{"context_number_string", "simple.json", func(d doc) { badSet(d, "latest", "context", "number") },
			false, "$.context.number", `not an unsigned integer: "latest"`, `"latest"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, hash := badTracetest(t, c.file)
			c.mutate(d)
			data := badMarshal(t, d)
			res := badDecode(t, data)
			if c.noTx {
				hash = ""
			}
			badCheckAll(t, data, res, badWant{tx: hash, path: c.path, msg: c.msg, at: c.at})
			if len(res.Txs) != 0 {
				t.Errorf("%d transactions decoded, want none", len(res.Txs))
			}
		})
	}
}

// badTraceBlockGeth builds a debug_traceBlock answer, [{"txHash",
// "result"}...], from tracer test files, with the hash of each.
func badTraceBlockGeth(t testing.TB, files ...string) ([]any, []string) {
	t.Helper()
	var items []any
	var hashes []string
	for _, f := range files {
		d, h := badTracetest(t, f)
		items = append(items, map[string]any{"txHash": h, "result": d["result"]})
		hashes = append(hashes, h)
	}
	return items, hashes
}

// TestBadInputGethBlock: in a debug_traceBlock answer each entry stands
// alone: a failed or corrupt entry is an error charged to its
// transaction, and the entries before a cut still decode.
func TestBadInputGethBlock(t *testing.T) {
	files := []string{"simple.json", "delegatecall.json", "notopic.json", "multi_contracts.json"}
	t.Run("entry_with_node_error", func(t *testing.T) {
		items, hashes := badTraceBlockGeth(t, files...)
		items[1] = map[string]any{"txHash": hashes[1], "error": "execution timeout"}
		data := badMarshal(t, items)
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{tx: hashes[1], path: "$[1]", msg: "the node could not trace this transaction: execution timeout", at: "{"})
		if len(res.Txs) != 3 {
			t.Errorf("%d transactions decoded, want 3", len(res.Txs))
		}
	})
	t.Run("entry_with_unknown_frame_type", func(t *testing.T) {
		items, hashes := badTraceBlockGeth(t, files...)
		badSet(items, "JUMP", 3, "result", "calls", 9, "calls", 7, "type")
		data := badMarshal(t, items)
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{tx: hashes[3], path: "$[3].result.calls[9].calls[7].type", msg: `unknown frame type "JUMP"`, at: `"JUMP"`})
		if len(res.Txs) != 3 {
			t.Errorf("%d transactions decoded, want 3", len(res.Txs))
		}
	})
	t.Run("truncated_in_third_entry", func(t *testing.T) {
		items, hashes := badTraceBlockGeth(t, files...)
		data := badMarshal(t, items)
		starts, _, _ := badSpans(t, data)
		cut := starts[2] + 1000
		data = data[:cut:cut]
		res := badDecode(t, data)
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Msg, "truncated JSON?") {
			t.Fatalf("%d errors (%v), want one about the end of input", len(res.Errors), res.Errors)
		}
		t.Logf("error text: %v", res.Errors[0])
		if len(res.Txs) != 2 || res.Txs[0].Meta.Hash.Hex() != hashes[0] || res.Txs[1].Meta.Hash.Hex() != hashes[1] {
			t.Errorf("%d transactions decoded, want the 2 entries before the cut", len(res.Txs))
		}
	})
}

// TestBadInputGethFrameWithLogs: a callTracer frame traced withLog has a
// "logs" key, like a bundle; alone or as a JSON-RPC result it is a trace
// (this was once read as a bundle with no trace).
func TestBadInputGethFrameWithLogs(t *testing.T) {
	simple, _ := badTracetest(t, "simple.json")
	frame := simple["result"]
	for name, doc := range map[string]any{
		"bare_frame":    frame,
		"rpc_result":    map[string]any{"jsonrpc": "2.0", "id": json.Number("1"), "result": frame},
		"list_of_frame": []any{frame},
	} {
		t.Run(name, func(t *testing.T) {
			res := badDecode(t, badMarshal(t, doc))
			if len(res.Errors) != 0 || len(res.Txs) != 1 {
				t.Fatalf("%d errors (%v), %d txs; want the frame decoded", len(res.Errors), res.Errors, len(res.Txs))
			}
			if res.Txs[0].Stats.Logs != 1 {
				t.Errorf("%d logs, want 1", res.Txs[0].Stats.Logs)
			}
		})
	}
}

// --- deep nesting ---------------------------------------------------------

// badGethChain is a callTracer frame with n calls nested below it, one per
// level, each frame a CALL of zero value.
func badGethChain(n int) []byte {
	const open = `{"type":"CALL","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x0","gas":"0x0","input":"0x","calls":[`
	const leaf = `{"type":"CALL","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x0","gas":"0x0","input":"0x"}`
	var b bytes.Buffer
	b.WriteString(strings.Repeat(open, n))
	b.WriteString(leaf)
	b.WriteString(strings.Repeat("]}", n))
	return b.Bytes()
}

// badDeepArray is [[[...]]] nested n deep.
func badDeepArray(n int) []byte {
	return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
}

// badParityChain is a Parity bundle whose frames nest n calls below the top
// frame, one per level, with an empty log list.
func badParityChain(n int, hash string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"traces":[`)
	for d := 0; d <= n; d++ {
		if d > 0 {
			b.WriteByte(',')
		}
		addr := strings.TrimSuffix(strings.Repeat("0,", d), ",")
		sub := 1
		if d == n {
			sub = 0
		}
		fmt.Fprintf(&b, `{"action":{"callType":"call","from":"0x00000000000000000000000000000000000000aa","gas":"0x0","input":"0x","to":"0x00000000000000000000000000000000000000bb","value":"0x0"},"result":{"gasUsed":"0x0","output":"0x"},"subtraces":%d,"traceAddress":[%s],"transactionHash":"%s","transactionPosition":0,"type":"call"}`, sub, addr, hash)
	}
	b.WriteString(`],"logs":[]}`)
	return b.Bytes()
}

// TestBadInputDeepNesting: call frames nested deeper than the EVM allows,
// and JSON nested deeper than the decoder's limit.
//
// go-ethereum's tracer reports the call that fails with "max call depth
// exceeded" as a frame too (captureBegin runs before the depth check), so a
// real trace can hold frames down to 1025 calls below the top frame; the
// decoder's limit, maxCallDepth, admits exactly those.
func TestBadInputDeepNesting(t *testing.T) {
	simple, hash := badTracetest(t, "simple.json")
	withResult := func(t *testing.T, result []byte) []byte {
		d := badCopy(simple).(map[string]any)
		d["result"] = "RESULT"
		return bytes.Replace(badMarshal(t, d), []byte(`"RESULT"`), result, 1)
	}
	t.Run("geth_1025_calls_deep_is_accepted", func(t *testing.T) {
		data := withResult(t, badGethChain(maxCallDepth))
		res := badDecode(t, data)
		if len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Fatalf("%d errors (%v), %d txs: a trace %d calls deep must decode", len(res.Errors), res.Errors, len(res.Txs), maxCallDepth)
		}
		if got := res.Txs[0].Stats.Frames; got != maxCallDepth+1 {
			t.Errorf("%d frames, want %d", got, maxCallDepth+1)
		}
	})
	for _, n := range []int{maxCallDepth + 1, 1100} {
		t.Run(fmt.Sprintf("geth_%d_calls_deep", n), func(t *testing.T) {
			data := withResult(t, badGethChain(n))
			res := badDecode(t, data)
			badCheckAll(t, data, res, badWant{tx: hash, path: "$.result" + strings.Repeat(".calls[0]", maxCallDepth+1),
				msg: fmt.Sprintf("call frames nested deeper than the EVM allows (%d)", maxCallDepth), at: `{"type":"CALL"`})
			// The path, 1,027 keys long, is abbreviated: the error stays short.
			msg := res.Errors[0].Error()
			if !strings.Contains(msg, "at $.result"+strings.Repeat(".calls[0]", 5)+"…(1,015 more)…"+strings.Repeat(".calls[0]", 6)+" (byte ") || len(msg) > 300 {
				t.Errorf("the error is %d bytes: %s", len(msg), badShort(msg))
			}
			if len(res.Txs) != 0 {
				t.Errorf("%d transactions decoded, want none", len(res.Txs))
			}
		})
	}
	t.Run("geth_1100_calls_deep_bare_frame", func(t *testing.T) {
		data := badGethChain(1100)
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{path: "$" + strings.Repeat(".calls[0]", maxCallDepth+1),
			msg: fmt.Sprintf("call frames nested deeper than the EVM allows (%d)", maxCallDepth), at: `{"type":"CALL"`})
	})
	const phash = "0x1111111111111111111111111111111111111111111111111111111111111111"
	t.Run("parity_1025_calls_deep_is_accepted", func(t *testing.T) {
		res := badDecode(t, badParityChain(maxCallDepth, phash))
		if len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Fatalf("%d errors (%v), %d txs: a trace %d calls deep must decode", len(res.Errors), res.Errors, len(res.Txs), maxCallDepth)
		}
	})
	t.Run("parity_1026_calls_deep", func(t *testing.T) {
		data := badParityChain(maxCallDepth+1, phash)
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{tx: phash, path: fmt.Sprintf("$.traces[%d].traceAddress", maxCallDepth+1),
			msg: fmt.Sprintf("traceAddress deeper than the EVM allows (%d)", maxCallDepth), at: "0]"})
	})
	t.Run("json_array_100000_deep", func(t *testing.T) {
		data := badDeepArray(100000)
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{path: "$[0]", msg: "expected an object, found an array", at: "[[["})
	})
	t.Run("json_object_100000_deep", func(t *testing.T) {
		data := []byte(strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000))
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{path: "$", msg: "unrecognised object: not a trace frame, receipt, log, block or bundle", at: `{"a"`})
	})
	t.Run("json_100000_deep_in_geth_frame", func(t *testing.T) {
		d := badCopy(simple).(map[string]any)
		badSet(d, "DEEP", "result", "junk")
		data := bytes.Replace(badMarshal(t, d), []byte(`"DEEP"`), badDeepArray(100000), 1)
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{tx: hash, path: "$.result.junk",
			msg: fmt.Sprintf("JSON nested deeper than %d levels", maxJSONDepth), at: "[[["})
	})
	t.Run("json_100000_deep_unclosed", func(t *testing.T) {
		// The element's own error is reported; the input ends inside it, so
		// nothing after it is read.
		data := []byte(strings.Repeat("[", 100000))
		res := badDecode(t, data)
		badCheckAll(t, data, res, badWant{path: "$[0]", msg: "expected an object, found an array", at: "[[["})
	})
}

func badU256Max() *uint256.Int {
	v := new(uint256.Int)
	v.SetAllOne()
	return v
}

// A node answers null for an unknown transaction; a receipt's type must
// be a byte.
func TestBadInputNullResultAndReceiptType(t *testing.T) {
	r := Decode([]byte(`{"jsonrpc":"2.0","id":1,"result":null}`), Options{Source: "bad.json"})
	if len(r.Txs) != 0 || len(r.Errors) != 1 || r.Errors[0].Error() != "bad.json: at $.result (byte 33): the node returned null: it does not have this transaction or block (unknown hash, or pruned history?)" {
		t.Errorf("null result: %v", r.Errors)
	}
	data, err := os.ReadFile("testdata/corpus/mev-inspect-rs/res/triangular_arb.data.json")
	if err != nil {
		t.Fatal(err)
	}
	bundle := `{"receipts":[{"transactionHash":"0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc","type":"0x1ff","status":"0x1","gasUsed":"0x1"}],` + string(data[1:])
	r = Decode([]byte(bundle), Options{Source: "bad.json"})
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Error(), "at $.receipts[0].type") || !strings.Contains(r.Errors[0].Error(), "transaction type 511 is not a byte") {
		t.Errorf("receipt type: %v", r.Errors)
	}
}

// TestUnhex: every byte's hex value, as strconv reads a one-digit hex
// number; 255 for a byte that is not a hex digit.
func TestUnhex(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := byte(255)
		if v, err := strconv.ParseUint(string([]byte{byte(c)}), 16, 8); err == nil {
			want = byte(v)
		}
		if got := unhex(byte(c)); got != want {
			t.Errorf("unhex(%q) = %d, want %d", byte(c), got, want)
		}
	}
}

// badCheckOthers: every transaction but the broken one (bundle) decodes
// as it did before the break (base: the summaries of the intact block).
func badCheckOthers(t *testing.T, res *Result, base []string, bundle int) {
	t.Helper()
	if len(res.Txs) != badBlockTxs-1 {
		t.Fatalf("%d transactions decoded, want the %d others", len(res.Txs), badBlockTxs-1)
	}
	want := append(append([]string{}, base[:bundle]...), base[bundle+1:]...)
	if got := badTxSummary(res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the other transactions changed:\n%s", textdiff.FirstLine(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}
}

// TestShortPath: a path of more than 12 keys keeps its first and last
// six, with the count of those left out; a key over 48 bytes is clipped;
// shorter paths are left as they are.
func TestShortPath(t *testing.T) {
	deep := "$" + strings.Repeat(".calls[0]", 1025)
	long := strings.Repeat("k", 100)
	for _, c := range []struct{ in, want string }{
		{"$.traces[3].action.value", "$.traces[3].action.value"},
		{"$[7][2]", "$[7][2]"},
		{"$" + strings.Repeat(".a", 12), "$" + strings.Repeat(".a", 12)},
		{"$" + strings.Repeat(".a", 13), "$.a.a.a.a.a.a…(1 more)….a.a.a.a.a.a"},
		{deep, "$" + strings.Repeat(".calls[0]", 6) + "…(1,013 more)…" + strings.Repeat(".calls[0]", 6)},
		{"$.block." + long + ".x", "$.block." + strings.Repeat("k", 47) + "….x"},
		{"$." + strings.Repeat("é", 30), "$." + strings.Repeat("é", 23) + "…"},
	} {
		if got := shortPath(c.in); got != c.want {
			t.Errorf("shortPath(%s)\n  = %s\nwant %s", badShort(c.in), got, c.want)
		}
	}
}
