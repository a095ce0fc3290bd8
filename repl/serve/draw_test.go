package serve

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/repl"
)

// widest ingests the mainnet examples into a fresh index and returns it
// with the transaction whose transfer graph has the most edges.
func widest(t *testing.T) (*index.Index, string, int) {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	inputs, err := ingest.Files(examples(t, "mainnet"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Ingest(context.Background(), ix, inputs, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	best, most := "", 0
	err = ix.Scan(context.Background(), func(r *index.Record) error {
		a, err := r.Analysis()
		if err != nil {
			return err
		}
		if n := dotEdges(repl.DOT(cfg, a, "graph")); n > most {
			best, most = r.Hash.Hex(), n
		}
		return nil
	})
	if err != nil || most < 2 {
		t.Fatalf("the widest transaction: %d edges, %v", most, err)
	}
	return ix, best, most
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestDrawBounded: a picture is laid out by Graphviz only within the
// server's bounds: one with more edges than MaxDrawEdges is refused
// (its DOT text still given); a layout that runs past DrawTimeout is
// stopped (Graphviz killed: the answer comes after it exits) and
// refused; when every turn is taken a request waits within its timeout
// and is refused with Retry-After; with a turn free the picture is drawn.
func TestDrawBounded(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Fatal("Graphviz's dot is not installed: run `make browser-setup` (apt-get install chromium graphviz)")
	}
	ix, tx, edges := widest(t)
	srv := New(ix, normalform.DefaultConfig(), "test")
	srv.MaxDrawEdges = edges - 1
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	code, _, body := get(t, hs.URL+"/draw/"+tx+"?view=graph&format=svg")
	want := fmt.Sprintf("has %d edges, over the %d", edges, edges-1)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, want) || !strings.Contains(body, "format=dot") {
		t.Errorf("a picture over the edges: %d %s", code, body)
	}
	if code, _, body := get(t, hs.URL+"/draw/"+tx+"?view=graph&format=dot"); code != http.StatusOK || dotEdges(body) != edges {
		t.Errorf("its DOT text: %d, %d edges", code, dotEdges(body))
	}

	// A dense graph Graphviz takes minutes over (500 edges among 166
	// nodes), drawn through the Render hook with the request's context.
	rng := rand.New(rand.NewSource(1))
	var dense strings.Builder
	dense.WriteString("digraph G {\n")
	for i := range 500 {
		fmt.Fprintf(&dense, "  n%d -> n%d [label=\"#%d 1.2345 WETH\"];\n", rng.Intn(166), rng.Intn(166), i)
	}
	dense.WriteString("}\n")
	srv = New(ix, normalform.DefaultConfig(), "test")
	srv.DrawTimeout = 300 * time.Millisecond
	srv.Render = func(ctx context.Context, _ string, w io.Writer) error {
		return repl.RenderGraphviz(ctx, dense.String(), "svg", w)
	}
	hs2 := httptest.NewServer(srv.Handler())
	defer hs2.Close()
	code, _, body = get(t, hs2.URL+"/draw/"+tx+"?format=svg")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "did not lay out") || !strings.Contains(body, "--draw-timeout") {
		t.Errorf("a layout past the timeout: %d %s", code, body)
	}

	// Every turn taken: a request waits its timeout for one.
	busy := New(ix, normalform.DefaultConfig(), "test")
	busy.DrawTimeout = 100 * time.Millisecond
	hs3 := httptest.NewServer(busy.Handler())
	defer hs3.Close()
	for range cap(busy.turns) {
		busy.turns <- struct{}{}
	}
	code, hdr, body := get(t, hs3.URL+"/draw/"+tx+"?view=tree&format=svg")
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(body, "being laid out") {
		t.Errorf("every turn taken: %d %q %s", code, hdr.Get("Retry-After"), body)
	}

	// Within the bounds (the defaults), the picture is drawn.
	hs4 := httptest.NewServer(New(ix, normalform.DefaultConfig(), "test").Handler())
	defer hs4.Close()
	for _, view := range []string{"graph", "tree"} {
		if code, _, body := get(t, hs4.URL+"/draw/"+tx+"?view="+view+"&format=svg"); code != http.StatusOK || !strings.Contains(body, "<svg") {
			t.Errorf("%s within the bounds: %d %.300s", view, code, body)
		}
	}
}

func TestDotEdges(t *testing.T) {
	for dot, want := range map[string]int{
		`digraph { a -> b; b -> c [label="x -> y"]; }`:          2,
		`digraph { a -> b [label="say \"->\" -> here"]; c->d }`: 2,
		`digraph { a [label="->->->"] }`:                        0,
	} {
		if got := dotEdges(dot); got != want {
			t.Errorf("%s: %d edges, want %d", dot, got, want)
		}
	}
}
