package serve

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/normalform/show"
)

// The web page in headless Chromium (Debian's package: `make
// browser-setup` installs it and Graphviz). Each page is loaded from a
// real server on loopback, its script run to the end of its fetches
// (--virtual-time-budget), and its DOM read back (--dump-dom); a
// screenshot of each goes to the artifact directory ($FLOWQ_ARTIFACTS,
// else flowq-browser under the temporary directory).

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium is not installed: run `make browser-setup` (apt-get install chromium graphviz)")
	return ""
}

func artifactDir(t *testing.T) string {
	dir := os.Getenv("FLOWQ_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "flowq-browser")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browse loads url in headless Chromium and returns its DOM after the
// script ran; with shot, it also writes a screenshot there.
func browse(t *testing.T, bin, u, shot string) string {
	t.Helper()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=15000", "--window-size=1400,1000"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append(args, "--dump-dom", u)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", u, err)
	}
	if shot != "" {
		cmd := exec.CommandContext(ctx, bin, append(args, "--screenshot="+shot, u)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium --screenshot %s: %v\n%s", u, err, b)
		}
		if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
			t.Fatalf("no screenshot at %s: %v", shot, err)
		}
		t.Logf("screenshot: %s", shot)
	}
	return string(out)
}

// TestBrowserPage: a query's rows in a table, an error with its caret,
// a transaction's verdict, steps and both pictures as inline SVG with one
// node per node of its DOT, and a bot's shapes.
func TestBrowserPage(t *testing.T) {
	bin := chromium(t)
	if _, err := exec.LookPath("dot"); err != nil {
		t.Fatal("Graphviz's dot is not installed: run `make browser-setup` (apt-get install chromium graphviz)")
	}
	srv, c, _ := startServer(t)
	ingestJob(t, c, IngestRequest{Paths: []string{examples(t, "mainnet"), examples(t, "scenarios/geth")}})
	art := artifactDir(t)

	q := "find arbitrages order by net profit desc limit 5"
	dom := browse(t, bin, c.Base+"/#q="+url.PathEscape(q), filepath.Join(art, "query.png"))
	if n := strings.Count(dom, `<a href="#tx=0x`); n != 5 {
		t.Errorf("the query's table has %d transaction links, want 5:\n%.2000s", n, dom)
	}
	if !strings.Contains(dom, `<table class="result">`) || !strings.Contains(dom, "<th>net</th>") || !strings.Contains(dom, "5 rows") {
		t.Errorf("no result table with a net column and its row count:\n%.2000s", dom)
	}

	dom = browse(t, bin, c.Base+"/#q="+url.PathEscape("find arbitrages wher pools > 3"), "")
	if !regexp.MustCompile(`<pre id="error">q:1:17: unexpected "wher"[^<]*\n\s+\^</pre>`).MatchString(dom) {
		t.Errorf("no error with its caret:\n%.2000s", dom)
	}

	tx := "0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa"
	dom = browse(t, bin, c.Base+"/#tx="+tx, filepath.Join(art, "tx.png"))
	if !strings.Contains(dom, `<dd id="verdict" class="verdict-arbitrage">arbitrage (confirmed)</dd>`) {
		t.Errorf("no verdict:\n%.3000s", dom)
	}
	if !regexp.MustCompile(`<ol id="steps"><li>`).MatchString(dom) {
		t.Errorf("no rewrite steps")
	}
	rec, err := srv.Ix.Get(mustHash(t, tx))
	if err != nil {
		t.Fatal(err)
	}
	a, err := rec.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	for id, dot := range map[string]string{"graph": show.TransferGraphDOT(srv.Cfg, a), "tree": show.NormalFormDOT(srv.Cfg, a)} {
		want := dotNodes(dot)
		box := between(dom, `<div id="`+id+`">`, `</svg>`)
		if got := strings.Count(box, `class="node`); got != want || want == 0 {
			t.Errorf("the %s's SVG has %d nodes, its DOT %d", id, got, want)
		}
	}

	bot := "0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74"
	dom = browse(t, bin, c.Base+"/#bot="+bot, filepath.Join(art, "bot.png"))
	if box := between(dom, `<div id="bot-shapes">`, `</div>`); !strings.Contains(box, `<th>shape</th>`) || !strings.Contains(box, "<tbody><tr>") {
		t.Errorf("no shapes for the bot:\n%.2000s", box)
	}
	if !strings.Contains(dom, `<div id="bot-anomalies">`) {
		t.Errorf("no anomalies section")
	}
	fmt.Fprintf(os.Stderr, "browser screenshots in %s\n", art)
}

// dotNodes counts the node statements of a DOT graph: lines `name [`
// that are not graph, node or edge defaults nor edges.
func dotNodes(dot string) int {
	n := 0
	for _, line := range strings.Split(dot, "\n") {
		l := strings.TrimSpace(line)
		if strings.Contains(l, "->") || !strings.Contains(l, "[") {
			continue
		}
		head := strings.TrimSpace(l[:strings.Index(l, "[")])
		if head == "graph" || head == "node" || head == "edge" || head == "" || strings.HasPrefix(head, "subgraph") {
			continue
		}
		n++
	}
	return n
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}
