package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// allocated is the bytes allocated while f runs: the process's, the
// loopback server's included (it writes an answer made beforehand).
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// serveBytes answers every request with body; requests counts them.
func serveBytes(t *testing.T, body []byte, requests *atomic.Int32) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// repeated is open, then elem n times joined by commas, then end.
func repeated(open, elem string, n int, end string) []byte {
	var b bytes.Buffer
	b.Grow(len(open) + n*(len(elem)+1) + len(end))
	b.WriteString(open)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(elem)
	}
	b.WriteString(end)
	return b.Bytes()
}

// allocBound is what a hostile answer of 3 MB may cost the client in
// allocations. Without the structure check, the answers below cost 563 MB
// (empty messages: 188 MB an attempt, and the missing answers are
// retried), 122, 125 and 102 MB ("error" data); with it, under 1.2 MB
// (the figures are logged).
const allocBound = 20 << 20

// TestHostileAnswersBounded: answers of 3 MB whose decoding would
// multiply in go-ethereum's client are refused as they arrive, with an
// *Error naming the method and what the node sent, in one attempt, and
// allocating little: a batch answer of a million empty messages to a
// block's three calls, a million empty messages to a single call,
// "error" members whose "data" is a million empty arrays, in a batch and
// alone, and a batch answer to 100 calls (TokenInfo's) whose "error"
// members are each within MaxErrorBytes.
func TestHostileAnswersBounded(t *testing.T) {
	const n = 1 << 20 // 3 MB of "{}," or "[],"
	data := func(id, n int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":1,"message":"x","data":%s}}`, id, repeated("[", "[]", n, "]"))
	}
	var within []string // 100 errors of 10,000 "[]," each: 30 KB
	for i := 1; i <= 100; i++ {
		within = append(within, data(i, 10_000))
	}
	block := func(cl *Client) error { _, err := cl.Block(context.Background(), 7); return err }
	single := func(cl *Client) error {
		var raw json.RawMessage
		return cl.Call(context.Background(), &raw, "eth_chainId")
	}
	calls := func(cl *Client) error {
		reqs := make([]Request, 100)
		for i := range reqs {
			reqs[i] = Request{Method: "eth_call", Result: new(json.RawMessage)}
		}
		return cl.Batch(context.Background(), reqs)
	}
	for _, c := range []struct {
		name string
		body []byte
		call func(*Client) error
		want string
	}{
		{"batch_of_empty_messages", repeated("[", "{}", n, "]"), block,
			"debug_traceBlockByNumber for block 7: the node answered 3 call(s) with more than 3 message(s) (message 4 starts at byte 10); stopped reading"},
		{"single_call_answered_by_many", repeated("[", "{}", n, "]"), single,
			"eth_chainId: the node answered 1 call(s) with more than 1 message(s) (message 2 starts at byte 4); stopped reading"},
		{"batch_of_huge_error_data", []byte("[" + data(1, n/3) + "," + data(2, n/3) + "," + data(3, n/3) + "]"), block,
			`debug_traceBlockByNumber for block 7: the node's answer has an "error" member over 65536 bytes (in message 1, from byte 33); stopped reading`},
		{"single_huge_error_data", []byte(data(1, n)), single,
			`eth_chainId: the node's answer has an "error" member over 65536 bytes (in message 1, from byte 32); stopped reading`},
		{"batch_of_errors_within_bounds_each", []byte("[" + strings.Join(within, ",") + "]"), calls,
			`eth_call: the node's answer has "error" members over 262144 bytes in all (message 9's, from byte 240569, passes it); stopped reading`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int32
			o := quick(Geth)
			o.Retries = 2
			cl := dial(t, serveBytes(t, c.body, &requests), o)
			var err error
			got := allocated(func() { err = c.call(cl) })
			var fe *Error
			var shape *AnswerShapeError
			if !errors.As(err, &fe) || !errors.As(err, &shape) || err.Error() != c.want {
				t.Errorf("error %T %v\nwant an *Error with an *AnswerShapeError: %s", err, err, c.want)
			}
			if fe != nil && (fe.Attempts != 1 || requests.Load() != 1) {
				t.Errorf("%d attempts, %d requests: an answer refused for its structure is not retried", fe.Attempts, requests.Load())
			}
			if got > allocBound {
				t.Errorf("a %d-byte answer allocated %d bytes, over %d", len(c.body), got, allocBound)
			}
			t.Logf("a %d-byte answer: %d bytes allocated: %v", len(c.body), got, err)
		})
	}
}

// TestErrorsAndBatchesWithinBounds: what real nodes send is not refused:
// a batch answer of as many messages as calls (elsewhere: every test of
// the package), one of fewer (answers missing: retried, as before), a
// JSON-RPC error with revert data, and an "error" member of
// MaxErrorBytes.
func TestErrorsAndBatchesWithinBounds(t *testing.T) {
	revert := `"0x08c379a0` + fmt.Sprintf("%064x%064x%x", 32, 15, "Ownable: caller") + strings.Repeat("0", 34) + `"` // Error(string)
	justUnder := `{"code":3,"message":"execution reverted","data":"` + strings.Repeat("a", MaxErrorBytes-len(`{"code":3,"message":"execution reverted","data":""}`)) + `"}`
	for _, c := range []struct {
		name, body, want string
	}{
		{"revert_data", `{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted: Ownable: caller","data":` + revert + `}}`, "eth_chainId: execution reverted: Ownable: caller"},
		{"error_of_MaxErrorBytes", `{"jsonrpc":"2.0","id":1,"error":` + justUnder + `}`, "eth_chainId: execution reverted"},
		{"one_of_one", `[{"jsonrpc":"2.0","id":1,"result":"0x1"}]`, "json: cannot unmarshal array"}, // go-ethereum's own refusal
	} {
		t.Run(c.name, func(t *testing.T) {
			var requests atomic.Int32
			var raw json.RawMessage
			err := dial(t, serveBytes(t, []byte(c.body), &requests), quick(Geth)).Call(context.Background(), &raw, "eth_chainId")
			var shape *AnswerShapeError
			if errors.As(err, &shape) || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	// A batch answer with fewer messages than calls: the one answered
	// has its result, the other is asked for again (and answered with
	// the same array, which go-ethereum refuses for a single call).
	var requests atomic.Int32
	url := serveBytes(t, []byte(`[{"jsonrpc":"2.0","id":1,"result":"0x1"}]`), &requests)
	reqs := []Request{{Method: "eth_chainId", Result: new(json.RawMessage)}, {Method: "eth_blockNumber", Result: new(json.RawMessage)}}
	_ = dial(t, url, quick(Geth)).Batch(context.Background(), reqs)
	var shape *AnswerShapeError
	if reqs[0].Err != nil || string(*reqs[0].Result.(*json.RawMessage)) != `"0x1"` || errors.As(reqs[1].Err, &shape) ||
		reqs[1].Err == nil || !strings.Contains(reqs[1].Err.Error(), "eth_blockNumber: gave up after 2 attempts") {
		t.Errorf("fewer messages than calls: %v, %v after %d requests", reqs[0].Err, reqs[1].Err, requests.Load())
	}
}

// shapeOf runs the structure check over answer in chunks of at most
// size bytes (0: whole).
func shapeOf(answer string, calls int, maxErr int64, size int) error {
	s := newShapeCheck(calls, maxErr, 2*maxErr+8)
	b := []byte(answer)
	if size <= 0 {
		size = max(len(b), 1)
	}
	for len(b) > 0 {
		k := min(size, len(b))
		if err := s.scan(b[:k]); err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
}

// TestShapeCheck: the structure check on answers whole, cut in two at
// every byte, and a byte at a time: what its state carries from a chunk
// to the next (a string, an escape, a key, an "error" member) decides as
// in one chunk.
func TestShapeCheck(t *testing.T) {
	const lim = 16
	for _, c := range []struct {
		answer string
		calls  int
		want   string // "": accepted; else the error
	}{
		{`[{"id":1,"result":"0x1"},{"id":2,"result":[1,2,3]},{"id":3,"result":{"a":[{},{}]}}]`, 3, ""},
		{`[{"id":1},{"id":2},{"id":3},{"id":4}]`, 3, "the node answered 3 call(s) with more than 3 message(s) (message 4 starts at byte 28); stopped reading"},
		{`[1,2]`, 1, "the node answered 1 call(s) with more than 1 message(s) (message 2 starts at byte 3); stopped reading"},
		{`[1,2,3,4,5]`, 0, ""}, // calls not said: no bound
		{` [ ] `, 1, ""},
		{`{"id":1,"result":[1,2,3,4,5]}`, 1, ""}, // commas below the top-level array count not
		// Commas, brackets and quotes in strings, escaped or not.
		{`[{"result":"a,b,\"],[,\\"},{"result":"\\\\\",\"\u0022,"}]`, 2, ""},
		{`[{"result":"\\"},{"result":","}]`, 1, "the node answered 1 call(s) with more than 1 message(s) (message 2 starts at byte 17); stopped reading"},
		// The "error" member, under and over lim bytes.
		{`{"id":1,"error":{"code":1,"m":2}}`, 1, ""}, // 16 bytes
		{`{"id":1,"error":{"code":1,"m":23}}`, 1, `the node's answer has an "error" member over 16 bytes (in message 1, from byte 16); stopped reading`},
		{`{"id":1,"error":"0123456789abcdefg"}`, 1, `the node's answer has an "error" member over 16 bytes (in message 1, from byte 16); stopped reading`},
		{`[{"id":1,"result":1},{"id":2,"error":[[],[],[],[],[],[]],"result":1}]`, 2, `the node's answer has an "error" member over 16 bytes (in message 2, from byte 37); stopped reading`},
		{`{"id":1,"error" : [[],[],[],[],[]] }`, 1, `the node's answer has an "error" member over 16 bytes (in message 1, from byte 17); stopped reading`},
		// Members each within lim, over 2*lim+8 in all.
		{`[{"error":"0123456789abcd"},{"error":"0123456789abcd"},{"id":3}]`, 3, ""},
		{`[{"error":"0123456789abcd"},{"error":"0123456789abcd"},{"error":"0123456789abcd"}]`, 3, `the node's answer has "error" members over 40 bytes in all (message 3's, from byte 64, passes it); stopped reading`},
		// Keys as encoding/json matches them to the field.
		{`{"ERROR":"0123456789abcdefg"}`, 1, `the node's answer has an "error" member over 16 bytes (in message 1, from byte 9); stopped reading`},
		{`{"\u0065rr\u004Fr":"0123456789abcdefg"}`, 1, `the node's answer has an "error" member over 16 bytes (in message 1, from byte 19); stopped reading`},
		// Not a message's "error": another key, a value, deeper, an
		// element that is no object, a second top-level value.
		{`{"errors":"0123456789abcdefg","erro":"0123456789abcdefg","e\u0072ror\u0000":"0123456789abcdefg"}`, 1, ""},
		{`{"result":"error","x":"0123456789abcdefg"}`, 1, ""},
		{`{"result":{"error":"0123456789abcdefg"}}`, 1, ""},
		{`[{"result":[{"txHash":"0x1","error":"execution timeout, 0123456789"}]}]`, 1, ""},
		{`[["error","0123456789abcdefg"],{"id":2}]`, 2, ""},
		{`["error",{"error":1}]`, 2, ""},
		{`[{}] [{},{},{}] {"error":"0123456789abcdefg"}`, 1, ""},
	} {
		for _, size := range []int{0, 1} {
			err := shapeOf(c.answer, c.calls, lim, size)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s (calls %d, chunks of %d): %q, want %q", c.answer, c.calls, size, got, c.want)
			}
		}
		for cut := 1; cut < len(c.answer); cut++ {
			s := newShapeCheck(c.calls, lim, 2*lim+8)
			err := s.scan([]byte(c.answer[:cut]))
			if err == nil {
				err = s.scan([]byte(c.answer[cut:]))
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s cut at %d: %q, want %q", c.answer, cut, got, c.want)
			}
		}
	}
}

// TestBlocksEachAtTopOfRange: a range at the top of uint64, against a
// node that refuses every request (HTTP 400, not retried), hands each of
// its blocks to fn once, with its error, and ends: lo+BatchSize-1 past
// 2^64-1 wrapped to a small hi (the range's blocks were never handed), and
// the one-block-at-a-time loop went on past 2^64-1 to block 0.
func TestBlocksEachAtTopOfRange(t *testing.T) {
	url := serve(t, &fakeNode{fail: func(int) int { return http.StatusBadRequest }})
	for _, c := range []struct {
		from  uint64
		batch int
	}{{math.MaxUint64 - 1, 1}, {math.MaxUint64 - 1, 2}, {math.MaxUint64 - 2, 4}, {math.MaxUint64, 3}} {
		o := quick(Geth)
		o.BatchSize = c.batch
		var mu sync.Mutex
		var got []uint64
		err := dial(t, url, o).BlocksEach(context.Background(), c.from, math.MaxUint64, func(n uint64, b []byte, err error) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, n)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("for block %d", n)) {
				t.Errorf("block %d: %v, want the node's refusal", n, err)
			}
			if len(got) > 10 {
				return errors.New("runaway: more blocks than the range has")
			}
			return nil
		})
		slices.Sort(got)
		var want []uint64
		for n := c.from; ; n++ {
			want = append(want, n)
			if n == math.MaxUint64 {
				break
			}
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%d..2^64-1, batches of %d: %v, blocks %v; want blocks %v", c.from, c.batch, err, got, want)
		}
	}
}

// BenchmarkShapeCheck: the structure check's throughput over batch
// answers made of the example transactions' bundles (examples/mainnet):
// as nodes send them (compact), and indented (spaces between the tokens,
// a byte at a time). It runs over every answer's every byte. On the
// 2-core machine (Go 1.26, 3 runs at load 0.8; BENCHMARKS.md, "Session
// 15"): 2.77 to 2.96 GB/s compact, 1.88 to 2.05 GB/s indented.
//
//	go test ./index/fetch -run '^$' -bench ShapeCheck -benchtime 2s -count 3
func BenchmarkShapeCheck(b *testing.B) {
	files, _ := filepath.Glob("../../examples/mainnet/*.json")
	if len(files) == 0 {
		b.Fatal("no examples/mainnet/*.json: run from the repository's index/fetch")
	}
	var compact, indented bytes.Buffer
	compact.WriteByte('[')
	indented.WriteByte('[')
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			compact.WriteByte(',')
			indented.WriteByte(',')
		}
		fmt.Fprintf(&compact, `{"jsonrpc":"2.0","id":%d,"result":`, i+1)
		if err := json.Compact(&compact, raw); err != nil {
			b.Fatal(err)
		}
		compact.WriteByte('}')
		fmt.Fprintf(&indented, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": %d,\n  \"result\": ", i+1)
		if err := json.Indent(&indented, raw, "  ", "  "); err != nil {
			b.Fatal(err)
		}
		indented.WriteString("\n}")
	}
	compact.WriteByte(']')
	indented.WriteByte(']')
	for _, c := range []struct {
		name   string
		answer []byte
	}{{"compact", compact.Bytes()}, {"indented", indented.Bytes()}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.answer)))
			for b.Loop() {
				s := newShapeCheck(len(files), MaxErrorBytes, MaxAnswerErrorBytes)
				for p := c.answer; len(p) > 0; { // in the chunks a body is read in
					k := min(32<<10, len(p))
					if err := s.scan(p[:k]); err != nil {
						b.Fatal(err)
					}
					p = p[k:]
				}
			}
		})
	}
}
