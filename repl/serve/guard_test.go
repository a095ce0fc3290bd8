package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
)

// send makes a request to base+path with the given headers (Host: the
// request's Host header when set) and returns its status and body.
func send(t *testing.T, method, url, ctype string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ingestForm is the multipart form a page elsewhere could make a browser
// post to /ingest (no preflight): a request to ingest the examples.
func ingestForm(t *testing.T, paths ...string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	req, _ := json.Marshal(IngestRequest{Paths: paths})
	if err := mw.WriteField("request", string(req)); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// TestCrossSiteRequestsRefused: the form posts a browser sends for a
// page on another site (/ingest's multipart, /query's and /api/rows'
// text/plain: none needs a preflight) are refused, by Sec-Fetch-Site or,
// from a browser without it, by an Origin naming another host; nothing
// is ingested. The server's own page (same origin) and the flowq
// commands (no such headers) are answered.
func TestCrossSiteRequestsRefused(t *testing.T) {
	srv, c, _ := startServer(t)
	ctype, form := ingestForm(t, examples(t, "mainnet"))
	evil := []map[string]string{
		{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
		{"Origin": "https://evil.example"}, // a browser that sends no Sec-Fetch-Site
		{"Sec-Fetch-Site": "same-site"},    // a sibling site: another origin still
	}
	for _, h := range evil {
		for _, r := range []struct {
			path, ctype string
			body        []byte
		}{
			{"/ingest", ctype, form},
			{"/query?format=json", "text/plain", []byte("count by verdict")},
			{"/api/rows", "text/plain", []byte("count by verdict")},
		} {
			code, body := send(t, "POST", c.Base+r.path, r.ctype, r.body, h)
			if code != http.StatusForbidden || !strings.Contains(body, "cross-site request forgery") {
				t.Errorf("%v POST %s: %d %s", h, r.path, code, body)
			}
		}
	}
	jobs, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := srv.Ix.Count(context.Background()); len(jobs.Jobs) != 0 || n != 0 {
		t.Fatalf("after the refused posts: %d jobs, %d transactions", len(jobs.Jobs), n)
	}
	// The page's own request: same origin.
	code, body := send(t, "POST", c.Base+"/api/rows", "text/plain", []byte("count by verdict"),
		map[string]string{"Origin": c.Base, "Sec-Fetch-Site": "same-origin"})
	if code != http.StatusOK || !strings.Contains(body, `"done"`) {
		t.Errorf("same-origin /api/rows: %d %s", code, body)
	}
	code, body = send(t, "POST", c.Base+"/ingest", ctype, form, map[string]string{"Origin": c.Base, "Sec-Fetch-Site": "same-origin"})
	if code/100 != 2 {
		t.Fatalf("same-origin /ingest: %d %s", code, body)
	}
	// Reading is not refused: a page elsewhere cannot read the answer.
	if code, body := send(t, "GET", c.Base+"/status", "", nil, evil[0]); code != http.StatusOK {
		t.Errorf("cross-site GET /status: %d %s", code, body)
	}
}

// TestRebindingRefused: a request addressed to a name that is not the
// server's (what DNS rebinding sends: the attacker's name, resolved to
// loopback) is refused, saying how to allow the name; IP addresses,
// localhost (and *.localhost), the machine's name and the names given in
// AllowHosts are answered.
func TestRebindingRefused(t *testing.T) {
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	srv := New(ix, normalform.DefaultConfig(), "test")
	srv.AllowHosts = []string{"Flowq.Team.Internal"}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	for _, host := range []string{"attacker.example:8642", "attacker.example", "127.0.0.1.attacker.example:80", "localhost.attacker.example", "team.internal:8642"} {
		for _, path := range []string{"/status", "/export", "/"} {
			code, body := send(t, "GET", hs.URL+path, "", nil, map[string]string{"Host": host})
			if code != http.StatusForbidden || !strings.Contains(body, "DNS rebinding") || !strings.Contains(body, "--allow-host "+canonicalHost(host)) {
				t.Errorf("Host %s GET %s: %d %s", host, path, code, body)
			}
		}
		code, body := send(t, "POST", hs.URL+"/query", "text/plain", []byte("count by verdict"), map[string]string{"Host": host})
		if code != http.StatusForbidden {
			t.Errorf("Host %s POST /query: %d %s", host, code, body)
		}
	}
	for _, host := range []string{"127.0.0.1:8642", "[::1]:8642", "10.1.2.3", "localhost:8642", "LOCALHOST.", "app.localhost:8642", "flowq.team.internal:8642", "FLOWQ.TEAM.INTERNAL."} {
		if code, body := send(t, "GET", hs.URL+"/status", "", nil, map[string]string{"Host": host}); code != http.StatusOK {
			t.Errorf("Host %s: %d %s", host, code, body)
		}
	}
}

// TestIngestRequestBounds: options a client could take the server with
// (a billion workers was a fatal out-of-memory and a dump of every
// goroutine) or lift its per-bundle limits with are refused with 400,
// naming the option and its range; no job is made.
func TestIngestRequestBounds(t *testing.T) {
	_, c, _ := startServer(t)
	for req, want := range map[string]string{
		`{"paths":["/nonexistent"],"workers":1000000000}`:       "workers 1000000000: want 1 to 1024",
		`{"paths":["/nonexistent"],"workers":-1}`:               "workers -1",
		`{"paths":["/nonexistent"],"batch":100000000000}`:       "batch 100000000000: want 1 to 65536",
		`{"paths":["/nonexistent"],"max_bytes":1099511627776}`:  "max_bytes 1099511627776: want 1 to 1073741824",
		`{"paths":["/nonexistent"],"max_bytes":-1}`:             "max_bytes -1",
		`{"paths":["/nonexistent"],"max_transfers":1073741824}`: "max_transfers 1073741824: want 1 to 262144",
	} {
		code, body := send(t, "POST", c.Base+"/ingest", "application/json", []byte(req), nil)
		if code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s", req, code, body)
		}
	}
	if st, err := c.Status(context.Background()); err != nil || len(st.Jobs) != 0 {
		t.Fatalf("jobs after refused requests: %+v, %v", st, err)
	}
}

// uploadForm is a multipart upload of files (name → bytes).
func uploadForm(t *testing.T, files map[string][]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, b := range files {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(b)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// TestUploadsBounded: the bytes of uploaded bundles the server holds (read,
// waiting for their job or being ingested) stay under MaxUpload. An upload
// that never fits is refused with 413, whether its length is given or
// not (a chunked body is cut where it passes the room); one that does
// not fit while another waits gets 503 and Retry-After; when the job
// that held the room ends, the same upload is taken and ingested.
func TestUploadsBounded(t *testing.T) {
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	bundle, err := os.ReadFile(filepath.Join(examples(t, "scenarios/geth"), "triangular_arb.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(ix, normalform.DefaultConfig(), "test")
	srv.MaxUpload = int64(len(bundle)) * 3 / 2 // room for one such upload, not two
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	defer srv.Close(context.Background())

	big := bytes.Repeat([]byte(" "), 2*len(bundle))
	ctype, form := uploadForm(t, map[string][]byte{"big.json": big})
	if code, body := send(t, "POST", hs.URL+"/ingest", ctype, form, nil); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "--max-upload") {
		t.Errorf("an upload over the room, its length given: %d %s", code, body)
	}
	// A reader of unknown length: ContentLength stays 0 and the body is
	// sent chunked.
	req, _ := http.NewRequest("POST", hs.URL+"/ingest", io.MultiReader(bytes.NewReader(form)))
	req.Header.Set("Content-Type", ctype)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || req.ContentLength != 0 {
			t.Errorf("an upload over the room, chunked: %d %s (length %d)", resp.StatusCode, b, req.ContentLength)
		}
	}
	if n := srv.heldNow(); n != 0 {
		t.Fatalf("after refused uploads the server holds %d bytes", n)
	}

	srv.ingest.Lock() // the first job waits: its upload is held
	ctype, form = uploadForm(t, map[string][]byte{"triangular_arb.json": bundle})
	code, body := send(t, "POST", hs.URL+"/ingest", ctype, form, nil)
	if code != http.StatusAccepted {
		srv.ingest.Unlock()
		t.Fatalf("the first upload: %d %s", code, body)
	}
	if n := srv.heldNow(); n != int64(len(bundle)) {
		t.Errorf("held %d bytes, want the bundle's %d", n, len(bundle))
	}
	req, _ = http.NewRequest("POST", hs.URL+"/ingest", bytes.NewReader(form))
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		srv.ingest.Unlock()
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "not yet ingested") {
		t.Errorf("a second upload while the first waits: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	srv.ingest.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for srv.heldNow() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.heldNow(); n != 0 {
		t.Fatalf("after the job the server holds %d bytes", n)
	}
	if code, body := send(t, "POST", hs.URL+"/ingest", ctype, form, nil); code != http.StatusAccepted {
		t.Fatalf("the upload again: %d %s", code, body)
	}
	for srv.heldNow() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := ix.Count(context.Background()); err != nil || n != 1 {
		t.Errorf("ingested %d transactions, %v; want the bundle's 1", n, err)
	}
}

// TestQueryLimitsCapped: a client's statement runs within the server's
// limits (QueryTimeout, MaxRows): a client may ask for less, not for
// more or for none; the web page's statements too.
func TestQueryLimitsCapped(t *testing.T) {
	srv, c, _ := startServer(t)
	ingestJob(t, c, IngestRequest{Paths: []string{examples(t, "mainnet"), examples(t, "scenarios/geth")}})
	hs := httptest.NewServer(func() http.Handler {
		capped := New(srv.Ix, srv.Cfg, "test")
		capped.MaxRows = 5
		return capped.Handler()
	}())
	defer hs.Close()
	hc := &Client{Base: hs.URL, HTTP: http.DefaultClient}
	ctx := context.Background()
	for asked, want := range map[int]string{-1: "5 rows", 0: "5 rows", 1000: "5 rows", 3: "3 rows"} {
		var out bytes.Buffer
		err := hc.Query(ctx, QueryRequest{Format: "table", MaxRows: asked}, "find where pools >= 0", &out)
		if err == nil || !strings.Contains(err.Error(), "result size limit of "+want) {
			t.Errorf("max_rows %d: %v", asked, err)
		}
	}
	code, body := send(t, "POST", hs.URL+"/api/rows", "text/plain", []byte("find where pools >= 0"), nil)
	if rows := strings.Count(body, `{"row":`); code != http.StatusOK || rows != 5 || !strings.Contains(body, "result size limit of 5 rows") {
		t.Errorf("the page's statement: %d, %d rows: %.500s", code, rows, body)
	}

	hs2 := httptest.NewServer(func() http.Handler {
		capped := New(srv.Ix, srv.Cfg, "test")
		capped.QueryTimeout = time.Nanosecond
		return capped.Handler()
	}())
	defer hs2.Close()
	hc2 := &Client{Base: hs2.URL, HTTP: http.DefaultClient}
	for _, asked := range []time.Duration{-1, 0, time.Hour} {
		var out bytes.Buffer
		err := hc2.Query(ctx, QueryRequest{Format: "json", Timeout: asked}, "find where pools >= 0", &out)
		if err == nil || !strings.Contains(err.Error(), "query time limit of 1ns") {
			t.Errorf("timeout %s: %v", asked, err)
		}
	}
}

// TestJobsBounded: the jobs a server holds are bounded: at most
// maxActiveJobs running or waiting (the next is refused with 503 and
// Retry-After), and the last keptJobs that ended (an older one's id says
// it is no longer kept).
func TestJobsBounded(t *testing.T) {
	srv, c, _ := startServer(t)
	file := filepath.Join(examples(t, "scenarios/geth"), "wrap.json")
	req := []byte(`{"paths":["` + file + `"]}`)
	post := func() (int, string) {
		return send(t, "POST", c.Base+"/ingest", "application/json", req, nil)
	}
	srv.ingest.Lock() // the jobs wait
	for i := range maxActiveJobs {
		if code, body := post(); code != http.StatusAccepted {
			srv.ingest.Unlock()
			t.Fatalf("job %d: %d %s", i+1, code, body)
		}
	}
	code, body := post()
	b, err := os.ReadFile(file)
	if err != nil {
		srv.ingest.Unlock()
		t.Fatal(err)
	}
	ctype, form := uploadForm(t, map[string][]byte{"wrap.json": b})
	upCode, upBody := send(t, "POST", c.Base+"/ingest", ctype, form, nil)
	held := srv.heldNow()
	srv.ingest.Unlock()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "64 ingest jobs are running or waiting") {
		t.Errorf("a job past the bound: %d %s", code, body)
	}
	if upCode != http.StatusServiceUnavailable || held != 0 {
		t.Errorf("an upload past the bound: %d %s; the server holds %d bytes of uploads after it", upCode, upBody, held)
	}
	waitJobs := func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			st, err := c.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			done := true
			for _, j := range st.Jobs {
				done = done && j.State != "running"
			}
			if done {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("the jobs did not end")
	}
	waitJobs()
	for i := 0; i < keptJobs; i++ { // in groups that stay under the active bound
		if code, body := post(); code != http.StatusAccepted {
			t.Fatalf("a job after the others ended: %d %s", code, body)
		}
		if i%(maxActiveJobs/2) == maxActiveJobs/2-1 {
			waitJobs()
		}
	}
	waitJobs()
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	last := maxActiveJobs + keptJobs
	if len(st.Jobs) != keptJobs || st.Jobs[len(st.Jobs)-1].ID != last {
		t.Errorf("%d jobs kept, the last %d; want %d, the last %d", len(st.Jobs), st.Jobs[len(st.Jobs)-1].ID, keptJobs, last)
	}
	if code, _, body := get(t, c.Base+"/ingest/1"); code != http.StatusNotFound || !strings.Contains(body, "no longer kept") {
		t.Errorf("the first job: %d %s", code, body)
	}
	if code, _, body := get(t, fmt.Sprintf("%s/ingest/%d", c.Base, last)); code != http.StatusOK || !strings.Contains(body, `"state":"done"`) {
		t.Errorf("the last job: %d %s", code, body)
	}
	if code, _, body := get(t, fmt.Sprintf("%s/ingest/%d", c.Base, last+1)); code != http.StatusNotFound || strings.Contains(body, "no longer kept") {
		t.Errorf("a job to come: %d %s", code, body)
	}
}

// TestHoldingStatementsTakeTurns: statements that hold their rows (a
// table's, the web page's) run one per CPU at a time, a further one
// waiting for a turn (here until its client gives up); streamed ones
// (JSON lines, CSV) hold nothing and do not wait; a turn given back lets
// the waiting kind run again.
func TestHoldingStatementsTakeTurns(t *testing.T) {
	srv, c, _ := startServer(t)
	ingestJob(t, c, IngestRequest{Paths: []string{examples(t, "mainnet")}})
	for range cap(srv.holding) {
		srv.holding <- struct{}{}
	}
	for _, format := range []string{"table", "box"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		var out bytes.Buffer
		err := c.Query(ctx, QueryRequest{Format: format}, "count by verdict", &out)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with every turn taken: %v (%q)", format, err, out.String())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "POST", c.Base+"/api/rows", strings.NewReader("count by verdict"))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("the page's statement with every turn taken: %s", resp.Status)
	}
	cancel()
	for _, format := range []string{"json", "csv"} {
		var out bytes.Buffer
		if err := c.Query(context.Background(), QueryRequest{Format: format}, "count by verdict", &out); err != nil || out.Len() == 0 {
			t.Errorf("%s with every turn taken: %v", format, err)
		}
	}
	<-srv.holding
	var out bytes.Buffer
	if err := c.Query(context.Background(), QueryRequest{Format: "table"}, "count by verdict", &out); err != nil || !strings.Contains(out.String(), "verdict") {
		t.Errorf("a table with a turn free: %v %q", err, out.String())
	}
	for range cap(srv.holding) - 1 {
		<-srv.holding
	}
}

// TestRemoteClientsLimited: a client on another host may not make the
// server read files of its host outside IngestRoot (none without one; a
// link out of the root does not count as inside), nor connect to a node
// AllowRPC does not name; a client on the server's host may. Uploads
// are for everyone.
func TestRemoteClientsLimited(t *testing.T) {
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	root := t.TempDir()
	bundle := filepath.Join(examples(t, "scenarios/geth"), "wrap.json")
	b, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "wrap.json")
	if err := os.WriteFile(inside, b, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "out")
	if err := os.Symlink(filepath.Dir(bundle), link); err != nil {
		t.Fatal(err)
	}
	srv := New(ix, normalform.DefaultConfig(), "test")
	defer srv.Close(context.Background())
	h := srv.Handler()
	post := func(from, ctype string, body []byte) (int, string) {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8642/ingest", bytes.NewReader(body))
		req.RemoteAddr = from
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	js := func(r IngestRequest) []byte { b, _ := json.Marshal(r); return b }
	const away, here = "203.0.113.7:40000", "127.0.0.1:40000"

	for _, tc := range []struct {
		root, want string
		req        IngestRequest
	}{
		{"", "taken from clients on that host only", IngestRequest{Paths: []string{inside}}},
		{root, "not under the server's --ingest-root", IngestRequest{Paths: []string{bundle}}},
		{root, "not under the server's --ingest-root", IngestRequest{Paths: []string{filepath.Join(link, "wrap.json")}}},
		{root, "not under the server's --ingest-root", IngestRequest{Paths: []string{filepath.Join(root, "..", filepath.Base(filepath.Dir(bundle)))}}},
		{root, "--allow-rpc", IngestRequest{RPC: "http://10.0.0.9:8545/?key=SECRETKEY", Blocks: "1..2"}},
	} {
		srv.IngestRoot, srv.AllowRPC = tc.root, []string{"http://node.example:8545"}
		code, body := post(away, "application/json", js(tc.req))
		if code != http.StatusForbidden || !strings.Contains(body, tc.want) || strings.Contains(body, "SECRETKEY") {
			t.Errorf("from another host, %+v (root %q): %d %s", tc.req, tc.root, code, body)
		}
	}
	if st := srv.jobInfos(); len(st) != 0 {
		t.Fatalf("jobs after refused requests: %d", len(st))
	}
	srv.IngestRoot = root
	for from, req := range map[string]IngestRequest{
		away: {Paths: []string{inside}},
		here: {Paths: []string{bundle}},
	} {
		if code, body := post(from, "application/json", js(req)); code != http.StatusAccepted {
			t.Errorf("from %s, %v: %d %s", from, req.Paths, code, body)
		}
	}
	// A node allowed, and any node from this host: accepted (the jobs
	// fail to connect; what is checked is that they are made).
	for from, u := range map[string]string{away: "http://node.example:8545/", here: "http://10.0.0.9:8545"} {
		if code, body := post(from, "application/json", js(IngestRequest{RPC: u, Blocks: "1..2"})); code != http.StatusAccepted {
			t.Errorf("from %s, node %s: %d %s", from, u, code, body)
		}
	}
	ctype, form := uploadForm(t, map[string][]byte{"wrap.json": b})
	if code, body := post(away, ctype, form); code != http.StatusAccepted {
		t.Errorf("an upload from another host: %d %s", code, body)
	}
}

// heldNow is the bytes of uploads the server holds.
func (s *Server) heldNow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}
