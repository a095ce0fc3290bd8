package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
)

// screenNode serves SYNTHETIC blocks (package workload) on 127.0.0.1 and
// counts the node's requests by method (workload.Node's stats). While
// kill is set, the first transaction asked for by debug_traceTransaction
// becomes the victim: every request that asks for its trace has its
// connection closed with no answer (a killed fetch).
type screenNode struct {
	node     *workload.Node
	srv      *httptest.Server
	from, to uint64

	mu     sync.Mutex
	kill   bool
	victim string // lowercase 0x hash
	killed int
}

// newScreenNode makes blocks of txs transactions each (seed 3), served
// from 127.0.0.1.
func newScreenNode(t testing.TB, blocks, txs int) *screenNode {
	t.Helper()
	sc, err := workload.LoadScenarios("../../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 3, BlockTxs: txs})
	if err != nil {
		t.Fatal(err)
	}
	s := &screenNode{node: workload.NewNode()}
	for i := 0; i < blocks; i++ {
		b := gen.Block()
		if i == 0 {
			s.from = b.Number
		}
		s.to = b.Number
		if err := s.node.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *screenNode) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	kill := false
	if s.kill {
		var reqs []struct {
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			_ = json.Unmarshal(body, &reqs)
		} else {
			reqs = make([]struct {
				Method string            `json:"method"`
				Params []json.RawMessage `json:"params"`
			}, 1)
			_ = json.Unmarshal(body, &reqs[0])
		}
		for _, q := range reqs {
			if q.Method != "debug_traceTransaction" || len(q.Params) == 0 {
				continue
			}
			var h string
			_ = json.Unmarshal(q.Params[0], &h)
			if s.victim == "" {
				s.victim = strings.ToLower(h)
			}
			if strings.ToLower(h) == s.victim {
				kill = true
			}
		}
		if kill {
			s.killed++
		}
	}
	s.mu.Unlock()
	if kill {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.node.ServeHTTP(w, r)
}

func (s *screenNode) url() string { return s.srv.URL }

// calls is how many requests of each method the node answered since
// before.
func (s *screenNode) calls(before workload.NodeStats) map[string]int64 {
	out := map[string]int64{}
	for m, st := range s.node.Stats().Sub(before).Methods {
		if st.Requests > 0 {
			out[m] = st.Requests
		}
	}
	return out
}

func (s *screenNode) blocks() string {
	return strconv.FormatUint(s.from, 10) + ".." + strconv.FormatUint(s.to, 10)
}

// indexRecords reads the records of an index the CLI closed, whole, by
// hash, their Latency (the analysis's wall time) zeroed.
func indexRecords(t *testing.T, path string) map[normalform.Hash]*index.Record {
	t.Helper()
	ix, err := index.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	out := map[normalform.Hash]*index.Record{}
	all := func(*index.Record) (bool, error) { return true, nil }
	if err := ix.Filter(context.Background(), index.AllBlocks, true, all, true, func(r *index.Record) error {
		r.Latency = 0
		out[r.Hash] = r
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

var confirmLine = regexp.MustCompile(`confirm: (\d+) screened from receipts, (\d+) to confirm, (\d+) confirmed \(traced\), (\d+) changed \(verdict differs\), (\d+) missing`)

// confirmCounts reads the confirm line of the summary: screened, to
// confirm, confirmed, changed, missing.
func confirmCounts(t *testing.T, errs string) [5]int {
	t.Helper()
	m := confirmLine.FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("no confirm line in:\n%s", errs)
	}
	var out [5]int
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out
}

// withScreenWindow sets the CLI's window for the test.
func withScreenWindow(t *testing.T, n int) {
	old := screenWindow
	screenWindow = n
	t.Cleanup(func() { screenWindow = old })
}

// TestIngestScreenReusesReceipts: `flowq ingest --mode receipts --confirm
// traces` over 6 synthetic blocks of 25 transactions, in windows of 2
// blocks, against a loopback node: every block's receipts and header are
// fetched once, by the screening (6 eth_getBlockReceipts, 6
// eth_getBlockByNumber), and confirming fetches only the suspects' traces
// (one debug_traceTransaction each, no eth_getTransactionReceipt, no
// header again, no block trace). The confirmed records are those a traced
// ingest of the range stores; the others stay receipts-only. The summary
// counts the suspects by reason and says they were confirmed with the
// screened receipts.
func TestIngestScreenReusesReceipts(t *testing.T) {
	if testing.Short() {
		t.Skip("serves synthetic blocks")
	}
	const blocks, txs = 6, 25
	withScreenWindow(t, 2)
	node := newScreenNode(t, blocks, txs)
	dir := t.TempDir()
	tracedEnv := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, "traced")}
	if _, errs, code := flowq(t, tracedEnv, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks()); code != 0 {
		t.Fatalf("traced ingest: exit %d: %s", code, errs)
	}
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, "screened")}
	before := node.node.Stats()
	_, errs, code := flowq(t, env, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks(), "--mode", "receipts", "--confirm", "traces")
	t.Log(errs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	n := confirmCounts(t, errs)
	if n[0] != blocks*txs || n[1] == 0 || n[1] >= n[0] || n[2] != n[1] || n[4] != 0 {
		t.Fatalf("screened %d, to confirm %d, confirmed %d, missing %d: want %d screened, some but not all confirmed, none missing", n[0], n[1], n[2], n[4], blocks*txs)
	}
	calls := node.calls(before)
	want := map[string]int64{"eth_getBlockReceipts": blocks, "eth_getBlockByNumber": blocks, "debug_traceTransaction": int64(n[1])}
	for m, c := range calls {
		if m == "eth_call" || m == "eth_chainId" { // naming tokens; dialing
			continue
		}
		if c != want[m] {
			t.Errorf("%s called %d times, want %d", m, c, want[m])
		}
	}
	if calls["debug_traceTransaction"] != int64(n[1]) {
		t.Errorf("debug_traceTransaction called %d times, want %d (one per suspect): %v", calls["debug_traceTransaction"], n[1], calls)
	}
	if !strings.Contains(errs, "to confirm because: ") || !strings.Contains(errs, strconv.Itoa(n[1])+" with the screened receipt (trace fetched alone)") {
		t.Errorf("the summary does not give the reasons or the reuse:\n%s", errs)
	}
	if !strings.Contains(errs, "blocks "+node.blocks()+": 6 fetched, 0 already indexed, 0 missing") {
		t.Errorf("the screening's line does not cover the range:\n%s", errs)
	}

	traced, screened := indexRecords(t, tracedEnv["FLOWQ_INDEX"]), indexRecords(t, env["FLOWQ_INDEX"])
	if len(traced) != blocks*txs || len(screened) != blocks*txs {
		t.Fatalf("%d traced records, %d screened ones; want %d each", len(traced), len(screened), blocks*txs)
	}
	confirmed := 0
	for h, r := range screened {
		if r.Mode != normalform.ModeTraces {
			continue
		}
		confirmed++
		if !reflect.DeepEqual(r, traced[h]) {
			t.Errorf("confirmed record %s:\n%+v\nthe traced ingest's:\n%+v", h.Hex(), r, traced[h])
		}
	}
	if confirmed != n[2] {
		t.Errorf("%d records traced in the index, the summary says %d confirmed", confirmed, n[2])
	}
}

// TestIngestScreenResumes: the first 2 blocks of 6 were screened by an
// earlier run (`--mode receipts`, no confirmation), so their receipts are
// not kept: `--mode receipts --confirm traces` over the 6 fetches only
// the other 4, confirms their suspects with what it screened, and the
// suspects of the first 2 the old way (each one's eth_getTransactionReceipt,
// and its block's eth_getBlockByNumber, again with the trace). All are confirmed, with the
// records of a run that screened everything. A third run confirms
// nothing more and fetches no trace.
func TestIngestScreenResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("serves synthetic blocks")
	}
	const blocks, txs = 6, 25
	withScreenWindow(t, 2)
	node := newScreenNode(t, blocks, txs)
	dir := t.TempDir()
	full := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, "full")}
	if _, errs, code := flowq(t, full, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks(), "--mode", "receipts", "--confirm", "traces"); code != 0 {
		t.Fatalf("screen and confirm: exit %d: %s", code, errs)
	}
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, "resumed")}
	first := strconv.FormatUint(node.from, 10) + ".." + strconv.FormatUint(node.from+1, 10)
	if _, errs, code := flowq(t, env, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", first, "--mode", "receipts"); code != 0 {
		t.Fatalf("screening the first blocks: exit %d: %s", code, errs)
	}
	// The suspects of the first two blocks, by their screened records.
	early, earlyBlocks := 0, map[uint64]bool{}
	for _, r := range indexRecords(t, env["FLOWQ_INDEX"]) {
		why, err := fetch.SuspectWhy(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if why != "" {
			early++
			earlyBlocks[r.Loc.Block] = true
		}
	}
	if early == 0 {
		t.Fatal("no suspect in the first two blocks: the test shows nothing")
	}
	before := node.node.Stats()
	_, errs, code := flowq(t, env, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks(), "--mode", "receipts", "--confirm", "traces")
	t.Log(errs)
	if code != 0 {
		t.Fatalf("resumed: exit %d: %s", code, errs)
	}
	n := confirmCounts(t, errs)
	calls := node.calls(before)
	if calls["eth_getTransactionReceipt"] != int64(early) || calls["eth_getBlockByNumber"] != int64(blocks-2+len(earlyBlocks)) || calls["eth_getBlockReceipts"] != blocks-2 ||
		calls["debug_traceTransaction"] != int64(n[1]) || n[2] != n[1] || n[4] != 0 {
		t.Errorf("calls %v, counts %v: want the receipts of the %d suspects of the 2 blocks screened before (and the headers of their %d blocks) fetched again, the 4 other blocks' once", calls, n, early, len(earlyBlocks))
	}
	if !strings.Contains(errs, "2 already indexed") {
		t.Errorf("the 2 blocks screened before were fetched again:\n%s", errs)
	}
	want, got := indexRecords(t, full["FLOWQ_INDEX"]), indexRecords(t, env["FLOWQ_INDEX"])
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the resumed index differs from the one screened and confirmed in one run (%d and %d records)", len(got), len(want))
	}

	before = node.node.Stats()
	_, errs, code = flowq(t, env, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks(), "--mode", "receipts", "--confirm", "traces")
	if n := confirmCounts(t, errs); code != 0 || n[1] != 0 || node.calls(before)["debug_traceTransaction"] != 0 {
		t.Errorf("third run: exit %d, counts %v, calls %v: want nothing to confirm\n%s", code, n, node.calls(before), errs)
	}
}

// TestIngestScreenKilledTrace: the node closes the connection of every
// request for one suspect's trace: the run confirms the others (still
// with the screened receipts), records the victim as a read failure of
// rpc:tx:0xHASH, says it is missing and exits 1; once the node answers,
// `flowq ingest --retry-failed --rpc URL` traces it, and its record is
// the traced ingest's.
func TestIngestScreenKilledTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("serves synthetic blocks")
	}
	const blocks, txs = 4, 25
	withScreenWindow(t, 2)
	node := newScreenNode(t, blocks, txs)
	dir := t.TempDir()
	tracedEnv := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, "traced")}
	if _, errs, code := flowq(t, tracedEnv, "", "ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks()); code != 0 {
		t.Fatalf("traced ingest: exit %d: %s", code, errs)
	}
	traced := indexRecords(t, tracedEnv["FLOWQ_INDEX"])
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, "screened")}
	node.mu.Lock()
	node.kill = true
	node.mu.Unlock()
	before := node.node.Stats()
	_, errs, code := flowq(t, env, "", "ingest", "--quiet", "--retries", "0", "--rpc", node.url(), "--blocks", node.blocks(), "--mode", "receipts", "--confirm", "traces")
	t.Log(errs)
	node.mu.Lock()
	node.kill = false
	victim, killed := node.victim, node.killed
	node.mu.Unlock()
	if victim == "" || killed == 0 {
		t.Fatal("no trace fetch was killed")
	}
	n := confirmCounts(t, errs)
	if code != 1 || n[4] != 1 || n[2] != n[1]-1 || !strings.Contains(strings.ToLower(errs), "not confirmed "+victim) {
		t.Errorf("exit %d, counts %v: want exit 1, the victim %s missing, the others confirmed\n%s", code, n, victim, errs)
	}
	if c := node.calls(before); c["eth_getTransactionReceipt"] != 0 || c["eth_getBlockByNumber"] != blocks {
		t.Errorf("calls %v: the confirmation fetched receipts or headers again", c)
	}
	out, _, code := flowq(t, env, "", "ingest", "--failures")
	if code != 0 || !strings.Contains(out, "rpc:tx:"+victim) {
		t.Errorf("--failures: exit %d: %s, want rpc:tx:%s", code, out, victim)
	}
	vh := normalform.Hash(hashOf(t, victim))
	if r := indexRecords(t, env["FLOWQ_INDEX"])[vh]; r == nil || r.Mode != normalform.ModeReceipts {
		t.Fatalf("the victim's record after the killed fetch: %+v, want the screened one", r)
	}
	_, errs, code = flowq(t, env, "", "ingest", "--quiet", "--retry-failed", "--rpc", node.url())
	if code != 0 {
		t.Fatalf("--retry-failed: exit %d: %s", code, errs)
	}
	if r := indexRecords(t, env["FLOWQ_INDEX"])[vh]; !reflect.DeepEqual(r, traced[vh]) {
		t.Errorf("the victim's record after --retry-failed:\n%+v\nthe traced ingest's:\n%+v", r, traced[vh])
	}
	out, _, _ = flowq(t, env, "", "ingest", "--failures")
	if strings.Contains(out, victim) {
		t.Errorf("the failure is still listed after --retry-failed: %s", out)
	}
}

func hashOf(t *testing.T, h string) [32]byte {
	t.Helper()
	x, ok := fetch.ParseTxName("rpc:tx:" + h)
	if !ok {
		t.Fatalf("not a transaction hash: %q", h)
	}
	return x
}

// BenchmarkIngestScreenConfirmCLI: `flowq ingest --mode receipts
// --confirm traces` over 100 synthetic blocks of 100 transactions (seed 3)
// from a loopback workload.Node, each iteration into a fresh index; it
// reports the node's requests and answer bytes by method, and the
// process's CPU time (getrusage: CLI, node and Badger are one process).
// BENCHMARKS.md, "the CLI reuses the screened receipts".
//
//	go test ./cmd/flowq -run '^$' -bench IngestScreenConfirmCLI -benchtime 1x
func BenchmarkIngestScreenConfirmCLI(b *testing.B) {
	node := newScreenNode(b, 100, 100)
	dir := b.TempDir()
	before := node.node.Stats()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		env := map[string]string{"FLOWQ_INDEX": filepath.Join(dir, strconv.Itoa(i))}
		var out, errb bytes.Buffer
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		if code := run([]string{"ingest", "--quiet", "--rpc", node.url(), "--blocks", node.blocks(), "--mode", "receipts", "--confirm", "traces"},
			strings.NewReader(""), &out, &errb, lookup); code != 0 {
			b.Fatalf("exit %d: %s", code, errb.String())
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	st := node.node.Stats().Sub(before)
	n := float64(b.N)
	b.ReportMetric(cpu.Seconds()/n, "cpu-s/op")
	b.ReportMetric(float64(st.HTTPRequests)/n, "http/op")
	b.ReportMetric(float64(st.BodyOut)/1e6/n, "MB-out/op")
	for _, m := range st.MethodNames() {
		b.ReportMetric(float64(st.Methods[m].Requests)/n, m+"/op")
	}
}
