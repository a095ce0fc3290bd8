package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/repl"
)

// startServer opens a fresh index in a temporary directory, serves it on
// a loopback port and returns a client found through the server file.
func startServer(t *testing.T) (*Server, *Client, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(ix, normalform.DefaultConfig(), "test")
	ln, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close(context.Background())
		ix.Close()
	})
	c, err := Find(dir, 5*time.Second)
	if err != nil || c == nil {
		t.Fatalf("Find: %v, %v", c, err)
	}
	return srv, c, dir
}

// bundles counts the example transactions the tests ingest (one bundle
// a transaction).
func bundles(t *testing.T) int {
	t.Helper()
	n := 0
	for _, sub := range []string{"mainnet", "scenarios/geth"} {
		fs, err := filepath.Glob(filepath.Join(examples(t, sub), "*.json"))
		if err != nil || len(fs) == 0 {
			t.Fatalf("examples/%s: %d bundles, %v", sub, len(fs), err)
		}
		n += len(fs)
	}
	return n
}

func examples(t *testing.T, sub string) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", sub))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func ingestJob(t *testing.T, c *Client, req IngestRequest) *JobInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j, err := c.Ingest(ctx, req, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != "done" || j.Summary.Failed != 0 {
		t.Fatalf("ingest job: %+v", j)
	}
	return j
}

// TestServeQuery: statements sent to the server answer with the bytes
// the same session prints on the index directly, in each format; a
// statement's error comes back with its position and caret.
func TestServeQuery(t *testing.T) {
	srv, c, _ := startServer(t)
	ingestJob(t, c, IngestRequest{Paths: []string{examples(t, "mainnet"), examples(t, "scenarios/geth")}})
	ctx := context.Background()
	for _, format := range repl.Modes {
		src := "count by verdict; find arbitrages order by net profit desc limit 3"
		var direct, remote bytes.Buffer
		s := &repl.Session{Cfg: srv.Cfg, Src: srv.Ix, Out: &direct, Mode: format}
		if err := s.Exec(ctx, "<query>", src); err != nil {
			t.Fatal(err)
		}
		if err := c.Query(ctx, QueryRequest{Format: format, File: "<query>"}, src, &remote); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if direct.String() != remote.String() || remote.Len() == 0 {
			t.Errorf("%s: the server's answer differs from the session's:\n%s\n---\n%s", format, remote.String(), direct.String())
		}
	}
	var out bytes.Buffer
	err := c.Query(ctx, QueryRequest{Format: "json", File: "q.fq", Line: 3}, "find arbitrages wher pools > 3", &out)
	var re *RemoteError
	if !errors.As(err, &re) || !strings.Contains(re.Msg, `q.fq:3:17: unexpected "wher" (did you mean "where"?)`) || !strings.Contains(re.Msg, "\n                    ^") {
		t.Errorf("error: %v", err)
	}
}

// TestServeIngestDuringQueries: queries sent while an ingest job writes
// all answer, each a consistent count (never a transaction counted without
// its keys: the counts by verdict and the total agree), never falling;
// after the job every transaction is there.
func TestServeIngestDuringQueries(t *testing.T) {
	_, c, _ := startServer(t)
	ctx := context.Background()
	j, err := c.StartIngest(ctx, IngestRequest{Paths: []string{examples(t, "mainnet"), examples(t, "scenarios/geth")}, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for i := 0; i < 30; i++ {
				var out bytes.Buffer
				if err := c.Query(ctx, QueryRequest{Format: "json"}, "count by verdict", &out); err != nil {
					errs <- err
					return
				}
				n := 0
				for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					if line == "" {
						continue
					}
					var row struct{ Transactions int }
					if err := json.Unmarshal([]byte(line), &row); err != nil {
						errs <- err
						return
					}
					n += row.Transactions
				}
				if n < last {
					errs <- errors.New("a later query counted fewer transactions")
					return
				}
				last = n
			}
		}()
	}
	for j.State == "running" {
		time.Sleep(10 * time.Millisecond)
		if j, err = c.Job(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if j.State != "done" || j.Summary.Stored != bundles(t) || !strings.Contains(j.Progress, "inputs") {
		t.Fatalf("job: %+v", j)
	}
	var out bytes.Buffer
	if err := c.Query(ctx, QueryRequest{Format: "csv"}, "count transactions by mode", &out); err != nil || !strings.Contains(out.String(), fmt.Sprintf("traces,%d,", bundles(t))) {
		t.Fatalf("after the ingest: %v\n%s", err, out.String())
	}
}

// TestServeStaleFile: a server file whose process is gone is stale and
// removed; one whose server does not answer is stale and kept.
func TestServeStaleFile(t *testing.T) {
	dir := t.TempDir()
	if c, err := Find(dir, time.Second); c != nil || err != nil {
		t.Fatalf("no file: %v %v", c, err)
	}
	host, _ := os.Hostname()
	dead := &Info{Addr: "127.0.0.1:1", Pid: 1 << 22, Host: host, Since: time.Now(), Index: dir}
	if err := writeInfo(dir, dead); err != nil {
		t.Fatal(err)
	}
	_, err := Find(dir, time.Second)
	var st *StaleError
	if !errors.As(err, &st) || !strings.Contains(err.Error(), "no longer runs") {
		t.Fatalf("dead pid: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, InfoFile)); !os.IsNotExist(err) {
		t.Errorf("the stale file is still there: %v", err)
	}
	// Alive (this process) but nothing listens there.
	mute := &Info{Addr: "127.0.0.1:1", Pid: os.Getpid(), Host: host, Since: time.Now(), Index: dir}
	writeInfo(dir, mute)
	if _, err := Find(dir, time.Second); !errors.As(err, &st) || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("mute server: %v", err)
	}
}

// TestServeWebAPI: the page, the completion, the rows of a query, a
// transaction and its picture.
func TestServeWebAPI(t *testing.T) {
	_, c, _ := startServer(t)
	ingestJob(t, c, IngestRequest{Paths: []string{examples(t, "scenarios/geth")}})
	get := func(path string) (int, string) {
		resp, err := http.Get(c.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, `id="query"`) {
		t.Errorf("/: %d %.200s", code, body)
	}
	if code, body := get("/api/complete?text=find+arbitrages+wh"); code != 200 || !strings.Contains(body, `"where"`) {
		t.Errorf("complete: %d %s", code, body)
	}
	resp, err := http.Post(c.Base+"/api/rows", "text/plain", strings.NewReader("find arbitrages order by net profit desc limit 2"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	resp.Body.Close()
	if len(lines) != 4 || lines[0]["columns"] == nil || lines[1]["row"] == nil || string(lines[3]["done"]) != "2" {
		t.Fatalf("rows: %v", lines)
	}
	var row [][2]string
	json.Unmarshal(lines[1]["row"], &row)
	tx := row[0][0]
	resp, _ = http.Post(c.Base+"/api/rows", "text/plain", strings.NewReader("find arbitrages wher pools > 3"))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"col":17,`) || !strings.Contains(string(b), `"line":1}`) {
		t.Errorf("error: %s", b)
	}
	if code, body := get("/tx/" + tx); code != 200 || !strings.Contains(body, `"verdict":"arbitrage"`) || !strings.Contains(body, `"steps"`) {
		t.Errorf("/tx: %d %.300s", code, body)
	}
	if code, body := get("/tx/0x" + strings.Repeat("ab", 32)); code != 404 || !strings.Contains(body, "not in the index") {
		t.Errorf("/tx unknown: %d %s", code, body)
	}
	if code, body := get("/draw/" + tx + "?view=tree&format=dot"); code != 200 || !strings.HasPrefix(body, "digraph") {
		t.Errorf("/draw: %d %.200s", code, body)
	}
}

func mustHash(t *testing.T, s string) normalform.Hash {
	t.Helper()
	h, err := normalform.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
