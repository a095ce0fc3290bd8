package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

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
