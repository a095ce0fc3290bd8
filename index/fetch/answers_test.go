package fetch

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// rawNode listens on loopback and hands every HTTP request, read with
// its body, to serve along with the raw connection: serve writes what it
// likes (a body shorter than its Content-Length, an endless stream) and
// returns false to close the connection. It returns the URL.
func rawNode(t *testing.T, serve func(c net.Conn, req *http.Request) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				go func() { <-done; c.Close() }()
				r := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(r)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if !serve(c, req) {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestAnswerOverLimit: a node streaming an endless answer (no
// Content-Length) is read up to MaxResponseBytes and no further: an
// *Error naming the method, the block and the limit, in one attempt (not
// retried), and the node could send little more than the limit before the
// connection closed. An answer whose Content-Length is over the limit is
// refused before its body is read.
func TestAnswerOverLimit(t *testing.T) {
	const limit = 1 << 20
	var sent atomic.Int64
	var requests atomic.Int32
	url := rawNode(t, func(c net.Conn, req *http.Request) bool {
		requests.Add(1)
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
		fmt.Fprint(c, `[{"jsonrpc":"2.0","id":1,"result":"`)
		chunk := []byte(strings.Repeat("a", 1<<16))
		for sent.Load() < 512<<20 { // far more than the limit; then silence
			n, err := c.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return false
			}
		}
		time.Sleep(time.Minute)
		return false
	})
	o := quick(Geth)
	o.MaxResponseBytes = limit
	o.Timeout = 20 * time.Second
	start := time.Now()
	_, err := dial(t, url, o).Block(context.Background(), 7)
	var fe *Error
	var big *AnswerTooLargeError
	if !errors.As(err, &fe) || !errors.As(err, &big) {
		t.Fatalf("error %T %v, want an *Error with an *AnswerTooLargeError", err, err)
	}
	for _, want := range []string{"debug_traceBlockByNumber for block 7", "over the limit of 1048576 bytes (--max-bytes)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if fe.Attempts != 1 || requests.Load() != 1 {
		t.Errorf("%d attempts, %d requests: an answer over the limit is not retried", fe.Attempts, requests.Load())
	}
	time.Sleep(100 * time.Millisecond)
	if s := sent.Load(); s > limit+32<<20 { // the limit, and what loopback socket buffers hold
		t.Errorf("the node sent %d bytes before the client stopped reading (limit %d)", s, limit)
	}
	t.Logf("stopped after %s; the node sent %d bytes", time.Since(start).Round(time.Millisecond), sent.Load())

	// A Content-Length over the limit: refused before the body.
	url = rawNode(t, func(c net.Conn, req *http.Request) bool {
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000000000\r\n\r\n[")
		time.Sleep(time.Minute)
		return false
	})
	_, err = dial(t, url, o).Block(context.Background(), 8)
	if !errors.As(err, &big) || !strings.Contains(err.Error(), "for block 8") ||
		!strings.Contains(err.Error(), "the node's answer is 5000000000 bytes (Content-Length), over the limit of 1048576 bytes (--max-bytes); not read") {
		t.Errorf("Content-Length over the limit: %v", err)
	}
}

// TestShortAnswerDetected: a node that announces 1000 bytes, sends 500
// and then nothing, without closing the connection. Each attempt fails
// within StallTimeout as a truncated answer, and is retried; the whole
// fetch takes nowhere near the request --timeout (30s). A node that
// closes the connection after 500 bytes is reported as truncated at once.
func TestShortAnswerDetected(t *testing.T) {
	for _, closeIt := range []bool{false, true} {
		var requests atomic.Int32
		url := rawNode(t, func(c net.Conn, req *http.Request) bool {
			requests.Add(1)
			body := []byte(`[{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("a", 500))[:500]
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
			_, _ = c.Write(body)
			if !closeIt {
				time.Sleep(time.Minute)
			}
			return false
		})
		o := quick(Geth)
		o.Timeout = 30 * time.Second
		o.StallTimeout = 300 * time.Millisecond
		o.Retries = 2
		start := time.Now()
		_, err := dial(t, url, o).Block(context.Background(), 7)
		took := time.Since(start)
		want := "truncated answer: 500 of 1000 bytes (Content-Length), then nothing for 300ms"
		if closeIt {
			want = "truncated answer: 500 of 1000 bytes (Content-Length), then the connection closed: unexpected EOF"
		}
		var fe *Error
		if !errors.As(err, &fe) || fe.Attempts != 3 || requests.Load() != 3 || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "debug_traceBlockByNumber for block 7") {
			t.Errorf("closed %v: %v after %d requests; want 3 attempts ending %q", closeIt, err, requests.Load(), want)
		}
		if took > 5*time.Second {
			t.Errorf("closed %v: took %s for 3 attempts: a stalled answer waited for the request timeout", closeIt, took)
		}
		t.Logf("closed %v: %s: %v", closeIt, took.Round(time.Millisecond), err)
	}
}

// mutated is a fake node whose answers for block 5 are changed by mut.
func mutated(mut func(m string, v any) any) *fakeNode {
	return &fakeNode{answer: func(m string, params []json.RawMessage) any {
		v := ingestAnswers(m, params)
		var num string
		_ = json.Unmarshal(params[0], &num)
		if num == "0x5" {
			return mut(m, v)
		}
		return v
	}}
}

// TestAnswersCheckedAgainstWhatWasAsked: a node that answers another
// block than the one asked for (header, receipts or traces), or gives a
// null trace for a block with transactions, is refused with an *Error
// naming the method, the block and what is wrong, not retried, and the
// range goes on: the block is recorded missing, nothing of it stored. A
// null trace of a block without transactions is an empty list.
func TestAnswersCheckedAgainstWhatWasAsked(t *testing.T) {
	h1005 := fmt.Sprintf("0x%064x", 0x1005)
	for _, c := range []struct {
		name, want string
		mut        func(m string, v any) any
	}{
		{"header_of_block_1005", "eth_getBlockByNumber for block 5: asked for block 5, the node answered block 1005", func(m string, v any) any {
			if m == "eth_getBlockByNumber" {
				return map[string]any{"number": "0x3ed", "parentHash": "0x00", "transactions": []string{h1005}}
			}
			return v
		}},
		{"receipt_of_another_block", "eth_getBlockReceipts for block 5: receipt 0 is of block 1005, not of block 5 as asked", func(m string, v any) any {
			if m == "eth_getBlockReceipts" {
				return []any{map[string]any{"transactionHash": fmt.Sprintf("0x%064x", 5), "blockNumber": "0x3ed", "status": "0x1"}}
			}
			return v
		}},
		{"trace_of_another_transaction", "debug_traceBlockByNumber for block 5: trace 0 is of transaction " + h1005 + ", which is not in block 5", func(m string, v any) any {
			if m == "debug_traceBlockByNumber" {
				return []any{map[string]any{"txHash": h1005, "result": map[string]any{"type": "CALL"}}}
			}
			return v
		}},
		{"missing_receipt", "eth_getBlockReceipts for block 5: 0 receipts for a block of 1 transaction", func(m string, v any) any {
			if m == "eth_getBlockReceipts" {
				return []any{}
			}
			return v
		}},
		{"null_trace", "debug_traceBlockByNumber for block 5: the node returned no trace (null) for a block of 1 transaction", func(m string, v any) any {
			if m == "debug_traceBlockByNumber" {
				return nil
			}
			return v
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := mutated(c.mut)
			cl := dial(t, serve(t, f), quick(Geth))
			_, err := cl.Block(context.Background(), 5)
			var fe *Error
			if !errors.As(err, &fe) || fe.Attempts != 1 || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one attempt and %q", err, c.want)
			}
			if f.requests != 1 {
				t.Errorf("%d requests: a wrong answer is not retried", f.requests)
			}
			ix := openIndex(t)
			rep, err := cl.IngestBlocks(context.Background(), ix, 4, 6, ingest.Options{})
			if err != nil || rep.Stored != 2 || len(rep.Missing) != 1 || rep.Missing[0].Block != 5 || !strings.Contains(rep.Missing[0].Err, c.want) {
				t.Errorf("ingest 4..6: %v\n%s", err, rep)
			}
			if _, err := ix.Get(mustHash(5)); !errors.Is(err, index.ErrNotFound) {
				t.Errorf("block 5's transaction is in the index: %v", err)
			}
		})
	}
	// An empty block may come with a null trace and null receipts.
	f := mutated(func(m string, v any) any {
		switch m {
		case "eth_getBlockByNumber":
			return map[string]any{"number": "0x5", "parentHash": "0x00", "transactions": []string{}}
		case "debug_traceBlockByNumber", "eth_getBlockReceipts":
			return nil
		}
		return v
	})
	b, err := dial(t, serve(t, f), quick(Geth)).Block(context.Background(), 5)
	if err != nil || !strings.Contains(string(b), `"receipts":[],"traces":[]`) {
		t.Errorf("empty block: %v, %s", err, b)
	}
}

// TestTxAnswersChecked: a receipt of another transaction, or a header of
// another block than the receipt's, is refused.
func TestTxAnswersChecked(t *testing.T) {
	h := common.HexToHash("0xaa")
	for _, c := range []struct {
		name, want string
		answer     func(m string, params []json.RawMessage) any
	}{
		{"receipt_of_another_tx", "eth_getTransactionReceipt for tx " + strings.ToLower(h.Hex()) + ": asked for tx", func(m string, params []json.RawMessage) any {
			if m == "eth_getTransactionReceipt" {
				return map[string]any{"transactionHash": common.HexToHash("0xbb").Hex(), "blockNumber": "0x7", "status": "0x1"}
			}
			return blockAnswers(m, params)
		}},
		{"header_of_another_block", "eth_getBlockByNumber for tx " + strings.ToLower(h.Hex()) + ": the receipt is of block 7, not of block 1007 as asked", func(m string, params []json.RawMessage) any {
			if m == "eth_getBlockByNumber" {
				return map[string]any{"number": "0x3ef", "transactions": []string{h.Hex()}}
			}
			return blockAnswers(m, params)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := dial(t, serve(t, &fakeNode{answer: c.answer}), quick(Geth)).Tx(context.Background(), h)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// issueURL is the URL of issue 15, its port replaced: a user and
// password, a key in the path, a key in the query.
func issueURL(hostport string) string {
	return "http://user:pass@" + hostport + "/v2/KEY?key=K"
}

// leaks reports what of the URL's secrets a message shows.
func leaks(msg string) []string {
	var out []string
	for _, s := range []string{"user:", ":pass", "pass@", "/v2/KEY", "key=K", "KEY?"} {
		if strings.Contains(msg, s) {
			out = append(out, s)
		}
	}
	return out
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pass@127.0.0.1:8545/v2/KEY?key=K":                                              "http://***@127.0.0.1:8545/v2/***?key=***",
		"https://eth-mainnet.g.alchemy.com/v2/AbCdEfGhIjKlMnOpQrStUvWxYz012345":                     "https://eth-mainnet.g.alchemy.com/v2/***",
		"https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef":                             "https://mainnet.infura.io/v3/***",
		"https://rpc.ankr.com/eth/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": "https://rpc.ankr.com/eth/***",
		"https://falling-snowy-dawn.quiknode.pro/0123456789abcdef0123456789abcdef01234567/":         "https://falling-snowy-dawn.quiknode.pro/***/",
		"https://lb.drpc.org/ogrpc?network=ethereum&dkey=Ak8QxL3":                                   "https://lb.drpc.org/ogrpc?network=***&dkey=***",
		"ws://127.0.0.1:8546":          "ws://127.0.0.1:8546",
		"http://127.0.0.1:8545/":       "http://127.0.0.1:8545/",
		"http://127.0.0.1:8545/rpc":    "http://127.0.0.1:8545/rpc",
		"alchemy.com/v2/KEYKEY":        "//alchemy.com/v2/***",
		"http://:s3cr3t@127.0.0.1:1/x": "http://***@127.0.0.1:1/x",
		"http://127.0.0.1:1/#frag":     "http://127.0.0.1:1/",
		"http://[::1]:8545/?KEY":       "http://[::1]:8545/?***",
		"http://a b/%zz":               "the node URL",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorsRedactURL: every error the client makes, and every failure
// it records, shows the node URL redacted: a refused connection, a
// timeout, an HTTP error whose page quotes the key, a bad URL, and the
// report and failure records of an ingest of blocks.
func TestErrorsRedactURL(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedAddr := closed.Listener.Addr().String()
	closed.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client go
		hang(w, r)
	}))
	t.Cleanup(hanging.Close)
	quoting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such project: user pass KEY0123456789 at "+r.URL.String(), 503)
	}))
	t.Cleanup(quoting.Close)
	o := quick(Geth)
	o.Timeout = 200 * time.Millisecond
	o.Retries = 1
	for name, url := range map[string]string{
		"refused": issueURL(closedAddr),
		"timeout": issueURL(hanging.Listener.Addr().String()),
		"quoted":  "http://user:passwordpass@" + quoting.Listener.Addr().String() + "/v2/KEY0123456789?key=K",
	} {
		c := dial(t, url, o)
		_, err := c.Block(context.Background(), 3)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if l := leaks(err.Error()); len(l) > 0 || strings.Contains(err.Error(), "KEY0123456789") || strings.Contains(err.Error(), "passwordpass") {
			t.Errorf("%s: %q shows %q", name, err, l)
		}
		if !strings.Contains(err.Error(), "***") && name != "quoted" {
			t.Errorf("%s: %q: where is the redacted URL?", name, err)
		}
		ix := openIndex(t)
		rep, err := c.IngestBlocks(context.Background(), ix, 1, 2, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		for _, f := range failures(t, ix) {
			all = append(all, f.String())
		}
		text := rep.String() + "\n" + strings.Join(all, "\n")
		if len(all) != 2 || len(leaks(text)) > 0 || strings.Contains(text, "KEY0123456789") {
			t.Errorf("%s: report and failures show %q:\n%s", name, leaks(text), text)
		}
		t.Logf("%s: %s", name, text)
	}
	_, err := Dial(context.Background(), "alchemy.com/v2/KEYKEY", Options{})
	if err == nil || strings.Contains(err.Error(), "KEYKEY") {
		t.Errorf("bad URL: %v", err)
	}
}
