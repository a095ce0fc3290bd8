package show_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/internal/textdiff"
	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/normalform/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/dot")

// --- a small DOT reader: enough of the grammar to check what the
// renderers write, strictly (every statement ends with ';', quoted strings
// never hold a raw newline, a node is declared once and before any edge
// uses it). ---------------------------------------------------------------

type dotNode struct {
	id       string
	attrs    map[string]string
	clusters []string // enclosing subgraphs, outermost first
}

type dotEdge struct {
	from, to  string
	attrs     map[string]string
	subgraphs []string
}

type dotGraph struct {
	name      string
	attrs     map[string]string // the top-level graph [...] attributes
	nodes     map[string]*dotNode
	order     []string
	edges     []*dotEdge
	subgraphs map[string]map[string]string // name → its graph [...] attributes
}

type dotTok struct {
	kind byte // 'i' identifier or quoted string, 'p' punctuation
	text string
}

func dotLex(src string) ([]dotTok, error) {
	var out []dotTok
	for i := 0; i < len(src); {
		ch := src[i]
		switch {
		case ch == ' ' || ch == '\n' || ch == '\t':
			i++
		case ch == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				switch src[j] {
				case '\n':
					return nil, fmt.Errorf("offset %d: raw newline in a quoted string", j)
				case '\\':
					if j+1 >= len(src) {
						return nil, fmt.Errorf("offset %d: dangling backslash", j)
					}
					j++
					switch src[j] {
					case '"':
						b.WriteByte('"')
					case '\\':
						b.WriteByte('\\')
					case 'n':
						b.WriteByte('\n')
					default:
						return nil, fmt.Errorf("offset %d: escape \\%c the renderers never write", j, src[j])
					}
				default:
					b.WriteByte(src[j])
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("offset %d: unterminated string", i)
			}
			out = append(out, dotTok{'i', b.String()})
			i = j + 1
		case strings.HasPrefix(src[i:], "->"):
			out = append(out, dotTok{'p', "->"})
			i += 2
		case strings.ContainsRune("{}[]=;,", rune(ch)):
			out = append(out, dotTok{'p', string(ch)})
			i++
		case ch == '_' || ch == '.' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] >= '0' && src[j] <= '9' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z') {
				j++
			}
			out = append(out, dotTok{'i', src[i:j]})
			i = j
		default:
			return nil, fmt.Errorf("offset %d: unexpected character %q", i, ch)
		}
	}
	return out, nil
}

func parseDOT(src string) (*dotGraph, error) {
	toks, err := dotLex(src)
	if err != nil {
		return nil, err
	}
	g := &dotGraph{nodes: map[string]*dotNode{}, subgraphs: map[string]map[string]string{}, attrs: map[string]string{}}
	p := 0
	peek := func() dotTok {
		if p < len(toks) {
			return toks[p]
		}
		return dotTok{}
	}
	expect := func(kind byte, text string) (string, error) {
		t := peek()
		if t.kind != kind || (text != "" && t.text != text) {
			return "", fmt.Errorf("token %d: want %q, got %q", p, text, t.text)
		}
		p++
		return t.text, nil
	}
	attrList := func() (map[string]string, error) {
		m := map[string]string{}
		if peek().text != "[" || peek().kind != 'p' {
			return m, nil
		}
		p++
		for !(peek().kind == 'p' && peek().text == "]") {
			k, err := expect('i', "")
			if err != nil {
				return nil, err
			}
			if _, err := expect('p', "="); err != nil {
				return nil, err
			}
			v, err := expect('i', "")
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("attribute %s given twice", k)
			}
			m[k] = v
			if peek().kind == 'p' && peek().text == "," {
				p++
			}
		}
		p++
		return m, nil
	}
	if _, err := expect('i', "digraph"); err != nil {
		return nil, err
	}
	if g.name, err = expect('i', ""); err != nil {
		return nil, err
	}
	var stmts func(stack []string) error
	stmts = func(stack []string) error {
		if _, err := expect('p', "{"); err != nil {
			return err
		}
		for {
			t := peek()
			if t.kind == 'p' && t.text == "}" {
				p++
				return nil
			}
			if t.kind != 'i' {
				return fmt.Errorf("token %d: unexpected %q (unbalanced braces?)", p, t.text)
			}
			p++
			switch {
			case t.text == "subgraph":
				name, err := expect('i', "")
				if err != nil {
					return err
				}
				if _, dup := g.subgraphs[name]; dup {
					return fmt.Errorf("subgraph %q opened twice", name)
				}
				g.subgraphs[name] = map[string]string{}
				if err := stmts(append(append([]string(nil), stack...), name)); err != nil {
					return err
				}
				continue
			case t.text == "graph" || t.text == "node" || t.text == "edge":
				m, err := attrList()
				if err != nil {
					return err
				}
				if t.text == "graph" {
					if len(stack) == 0 {
						g.attrs = m
					} else {
						g.subgraphs[stack[len(stack)-1]] = m
					}
				}
			case peek().kind == 'p' && peek().text == "->":
				p++
				to, err := expect('i', "")
				if err != nil {
					return err
				}
				m, err := attrList()
				if err != nil {
					return err
				}
				for _, end := range []string{t.text, to} {
					if g.nodes[end] == nil {
						return fmt.Errorf("edge %s -> %s: endpoint %q not declared", t.text, to, end)
					}
				}
				g.edges = append(g.edges, &dotEdge{from: t.text, to: to, attrs: m, subgraphs: append([]string(nil), stack...)})
			default:
				m, err := attrList()
				if err != nil {
					return err
				}
				if g.nodes[t.text] != nil {
					return fmt.Errorf("node %q declared twice", t.text)
				}
				g.nodes[t.text] = &dotNode{id: t.text, attrs: m, clusters: append([]string(nil), stack...)}
				g.order = append(g.order, t.text)
			}
			if _, err := expect('p', ";"); err != nil {
				return err
			}
		}
	}
	if err := stmts(nil); err != nil {
		return nil, err
	}
	if p != len(toks) {
		return nil, fmt.Errorf("%d tokens after the graph's closing brace", len(toks)-p)
	}
	return g, nil
}

func (n *dotNode) in(cluster string) bool {
	for _, c := range n.clusters {
		if c == cluster {
			return true
		}
	}
	return false
}

func (e *dotEdge) in(sub string) bool {
	for _, c := range e.subgraphs {
		if c == sub {
			return true
		}
	}
	return false
}

func (g *dotGraph) edgeByID(id string) *dotEdge {
	for _, e := range g.edges {
		if e.attrs["id"] == id {
			return e
		}
	}
	return nil
}

func (g *dotGraph) countClass(word string) int {
	n := 0
	for _, id := range g.order {
		for _, w := range strings.Fields(g.nodes[id].attrs["class"]) {
			if w == word {
				n++
			}
		}
	}
	return n
}

// --- loading the bundled traces -------------------------------------------

type namedAnalysis struct {
	name string
	a    *Analysis
}

func loadTraces(t *testing.T, cfg *Config, patterns ...string) []namedAnalysis {
	t.Helper()
	var out []namedAnalysis
	for _, pat := range patterns {
		files, err := filepath.Glob(pat)
		if err != nil || len(files) == 0 {
			t.Fatalf("no trace matches %s (%v)", pat, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res := trace.Decode(data, trace.Options{Config: cfg, Source: f})
			if len(res.Errors) > 0 || len(res.Txs) == 0 {
				t.Fatalf("%s: %d transactions, errors %v", f, len(res.Txs), res.Errors)
			}
			for i, tx := range res.Txs {
				a, err := Analyze(tx, cfg)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				name := strings.TrimSuffix(filepath.Base(f), ".json")
				if len(res.Txs) > 1 {
					name += fmt.Sprint("#", i)
				}
				out = append(out, namedAnalysis{filepath.Base(filepath.Dir(f)) + "/" + name, a})
			}
		}
	}
	return out
}

var corpusGlobs = []string{"../../examples/mainnet/*.json", "../../examples/scenarios/geth/*.json", "../../examples/scenarios/parity/*.json", "../trace/testdata/corpus/*/*/*.json"}

// --- the transfer graph ----------------------------------------------------

func TestTransferGraphDOTCorpus(t *testing.T) {
	cfg := DefaultConfig()
	all := loadTraces(t, cfg, corpusGlobs...)
	if len(all) < 40 {
		t.Fatalf("only %d transactions in the bundled traces", len(all))
	}
	for _, na := range all {
		a := na.a
		t.Run(na.name, func(t *testing.T) {
			src := show.TransferGraphDOT(cfg, a)
			g, err := parseDOT(src)
			if err != nil {
				t.Fatalf("not sane DOT: %v\n%s", err, src)
			}
			for i := 0; i < 5; i++ {
				if again := show.TransferGraphDOT(cfg, a); again != src {
					t.Fatal("two renderings of the same analysis differ")
				}
			}
			// The index keeps the encoded normal form: its picture is the same.
			dec, err := DecodeNF(EncodeNF(a))
			if err != nil {
				t.Fatal(err)
			}
			if got := show.TransferGraphDOT(cfg, dec); got != src {
				t.Errorf("the decoded normal form draws differently:\n%s", textdiff.FirstLine(src, got))
			}

			// One node per address: the transfers' endpoints and the principals.
			m := a.Tx.Meta
			addrs := map[string]bool{}
			endpoints := map[Address]bool{}
			for _, tr := range a.Tx.Transfers {
				addrs[AddrKey(tr.From)], addrs[AddrKey(tr.To)] = true, true
				endpoints[tr.From], endpoints[tr.To] = true, true
			}
			if m.HasFrom {
				addrs[AddrKey(a.Sender)] = true
			}
			recipientKnown := m.HasTo || endpoints[a.Recipient]
			if recipientKnown {
				addrs[AddrKey(a.Recipient)] = true
			}
			if len(g.nodes) != len(addrs) {
				t.Errorf("%d nodes, want %d addresses", len(g.nodes), len(addrs))
			}
			for id := range addrs {
				if g.nodes[id] == nil {
					t.Errorf("address %s has no node", id)
				}
			}
			// One edge per transfer, from its source to its destination, and
			// the call when both principals are known.
			call := 0
			if m.HasFrom && recipientKnown && a.Sender != a.Recipient {
				call = 1
			}
			if len(g.edges) != len(a.Tx.Transfers)+call {
				t.Errorf("%d edges, want %d transfers + %d call", len(g.edges), len(a.Tx.Transfers), call)
			}
			if call == 1 {
				if e := g.edgeByID("call"); e == nil || e.from != AddrKey(a.Sender) || e.to != AddrKey(a.Recipient) {
					t.Errorf("call edge %+v", e)
				}
			}
			for _, tr := range a.Tx.Transfers {
				e := g.edgeByID(fmt.Sprintf("t%d", tr.Pos))
				if e == nil {
					t.Errorf("transfer #%d has no edge", tr.Pos)
					continue
				}
				if e.from != AddrKey(tr.From) || e.to != AddrKey(tr.To) {
					t.Errorf("edge t%d goes %s -> %s", tr.Pos, e.from, e.to)
				}
				if !strings.HasPrefix(e.attrs["label"], fmt.Sprintf("#%d", tr.Pos)) || !strings.Contains(e.attrs["label"], cfg.FormatAmount(&tr.Amount, tr.Token)) {
					t.Errorf("edge t%d label %q: want its position and %s", tr.Pos, e.attrs["label"], cfg.FormatAmount(&tr.Amount, tr.Token))
				}
			}
			// Principals and the kinds of nodes.
			if m.HasFrom && g.countClass("sender") != 1 {
				t.Errorf("%d sender nodes", g.countClass("sender"))
			}
			if recipientKnown && g.countClass("recipient") != 1 {
				t.Errorf("%d recipient nodes", g.countClass("recipient"))
			}
			// Every chain's transfers are grouped in its subgraph, with its id.
			for i, n := range nfChildren(a) {
				if n.Chain == nil {
					continue
				}
				sub := fmt.Sprintf("e%d:C%d", i, n.Chain.ID)
				if _, ok := g.subgraphs[sub]; !ok {
					t.Errorf("no subgraph %s", sub)
					continue
				}
				for _, tr := range n.Chain.Transfers(nil) {
					e := g.edgeByID(fmt.Sprintf("t%d", tr.Pos))
					if e == nil || !e.in(sub) || !strings.Contains(e.attrs["label"], fmt.Sprintf("C%d", n.Chain.ID)) {
						t.Errorf("transfer #%d of C%d is not drawn in %s", tr.Pos, n.Chain.ID, sub)
					}
				}
				if n.Chain.Label == Arbitrage && n.Chain.Closed() {
					title := g.subgraphs[sub]["label"]
					delta := show.FormatDelta(cfg, n.Chain.BalanceOf(n.Chain.Origin()))
					if !strings.Contains(title, fmt.Sprintf("C%d arbitrage", n.Chain.ID)) || !strings.Contains(title, delta) ||
						!strings.Contains(g.attrs["label"], title) {
						t.Errorf("cycle C%d's legend %q lacks its id or δ %s, or is not in the graph label", n.Chain.ID, title, delta)
					}
				}
			}
			checkCaption(t, cfg, a, g.attrs["label"])
		})
	}
}

// checkCaption: the verdict, tier and net profit are in the graph label.
func checkCaption(t *testing.T, cfg *Config, a *Analysis, label string) {
	t.Helper()
	want := []string{"verdict " + strings.ToUpper(a.Verdict.String())}
	if a.Tier != TierNone {
		want = append(want, "("+a.Tier.String()+")")
	}
	if a.Costs.Known {
		want = append(want, "net profit "+show.FormatDelta(cfg, a.Net))
	} else {
		want = append(want, "net profit unknown")
	}
	if a.Tx.Meta.HasHash {
		want = append(want, a.Tx.Meta.Hash.Hex())
	}
	for _, w := range want {
		if !strings.Contains(label, w) {
			t.Errorf("graph label lacks %q:\n%s", w, label)
		}
	}
}

// --- the reduced tree --------------------------------------------------------

func TestNormalFormDOTCorpus(t *testing.T) {
	cfg := DefaultConfig()
	for _, na := range loadTraces(t, cfg, corpusGlobs...) {
		a := na.a
		t.Run(na.name, func(t *testing.T) {
			src := show.NormalFormDOT(cfg, a)
			g, err := parseDOT(src)
			if err != nil {
				t.Fatalf("not sane DOT: %v\n%s", err, src)
			}
			for i := 0; i < 5; i++ {
				if again := show.NormalFormDOT(cfg, a); again != src {
					t.Fatal("two renderings of the same analysis differ")
				}
			}
			dec, err := DecodeNF(EncodeNF(a))
			if err != nil {
				t.Fatal(err)
			}
			if got := show.NormalFormDOT(cfg, dec); got != src {
				t.Errorf("the decoded normal form draws differently:\n%s", textdiff.FirstLine(src, got))
			}
			// A tree rooted at "nf": every other node has one parent.
			parents := map[string]int{}
			for _, e := range g.edges {
				parents[e.to]++
			}
			for _, id := range g.order {
				want := 1
				if id == "nf" {
					want = 0
				}
				if parents[id] != want {
					t.Errorf("node %s has %d parents, want %d", id, parents[id], want)
				}
			}
			// Every transfer of the normal form is one leaf, in its element's cluster.
			leaves := 0
			for _, id := range g.order {
				if strings.HasPrefix(g.nodes[id].attrs["class"], "transfer") {
					leaves++
				}
			}
			if nfLeaves := len(a.NF.Leaves(nil)); leaves != nfLeaves {
				t.Errorf("%d transfer leaves drawn, the normal form has %d", leaves, nfLeaves)
			}
			builder := map[int32]bool{}
			for _, tr := range a.Builder {
				builder[tr.Pos] = true
			}
			for i, n := range nfChildren(a) {
				if n.Leaf != nil {
					node := g.nodes[fmt.Sprintf("t%d", n.Leaf.Pos)]
					cluster := "cluster_leftovers"
					if builder[n.Leaf.Pos] {
						cluster = "cluster_costs"
					}
					if node == nil || !node.in(cluster) {
						t.Errorf("leaf #%d is not in %s", n.Leaf.Pos, cluster)
					}
					continue
				}
				cluster := fmt.Sprintf("cluster_e%d", i)
				if _, ok := g.subgraphs[cluster]; !ok {
					t.Errorf("C%d has no cluster", n.Chain.ID)
					continue
				}
				if !strings.HasPrefix(g.subgraphs[cluster]["label"], fmt.Sprintf("C%d ", n.Chain.ID)) {
					t.Errorf("cluster of C%d is labelled %q", n.Chain.ID, g.subgraphs[cluster]["label"])
				}
				for _, tr := range n.Chain.Transfers(nil) {
					node := g.nodes[fmt.Sprintf("t%d", tr.Pos)]
					if node == nil || !node.in(cluster) {
						t.Errorf("transfer #%d of C%d is not in %s", tr.Pos, n.Chain.ID, cluster)
					}
				}
			}
			// The swaps drawn are the terms' swaps, plus a Star's return
			// (the closing swap the Star records and its body leaves out).
			terms := a.Terms()
			for i, n := range nfChildren(a) {
				if n.Chain == nil {
					continue
				}
				cluster := fmt.Sprintf("cluster_e%d", i)
				drawn, returns := 0, 0
				for _, id := range g.order {
					if node := g.nodes[id]; node.in(cluster) {
						drawn += strings.Count(node.attrs["label"], "⇄ Swap@")
						returns += strings.Count(node.attrs["label"], "↩ return Swap@")
					}
				}
				if returns > 1 || (returns == 1 && terms[i].Kind != TStar) {
					t.Errorf("C%d (%v): %d returns drawn", n.Chain.ID, n.Chain.Label, returns)
				}
				if want := countSwaps(terms[i]); drawn != want {
					t.Errorf("C%d: %d swaps drawn, its term has %d", n.Chain.ID, drawn, want)
				}
			}
			checkCaption(t, cfg, a, g.attrs["label"])
		})
	}
}

func nfChildren(a *Analysis) []*Node {
	if a.NF == nil {
		return nil
	}
	return a.NF.Children
}

func countSwaps(t *Term) int {
	n := 0
	if t.Kind == TSwap {
		n++
	}
	for _, p := range t.Parts {
		n += countSwaps(p)
	}
	return n
}

// The paper's tx_R as a scenario: one cycle, three parallel arms of two
// swaps each, converging on the hub, whose swap is the cycle's return.
func TestDOTStarR(t *testing.T) {
	cfg := DefaultConfig()
	a := loadTraces(t, cfg, "../../examples/scenarios/geth/star_r.json")[0].a
	g, err := parseDOT(show.NormalFormDOT(cfg, a))
	if err != nil {
		t.Fatal(err)
	}
	var cycles []string
	for name, attrs := range g.subgraphs {
		if strings.Contains(attrs["label"], "arbitrage") {
			cycles = append(cycles, name)
		}
	}
	if len(cycles) != 1 {
		t.Fatalf("arbitrage clusters %v, want one", cycles)
	}
	cyc := cycles[0]
	var par []string
	for _, id := range g.order {
		if n := g.nodes[id]; n.attrs["class"] == "parallel" && n.in(cyc) {
			par = append(par, id)
		}
	}
	if len(par) != 1 || !strings.HasPrefix(g.nodes[par[0]].attrs["label"], "∥ 3 parallel arms (R7)") {
		t.Fatalf("parallel nodes %v in %s, want one with 3 arms", par, cyc)
	}
	arms := 0
	hubs := 0
	for _, e := range g.edges {
		if e.from != par[0] {
			continue
		}
		arms++
		arm := g.nodes[e.to]
		if arm.attrs["class"] != "arm" || !strings.Contains(arm.attrs["label"], "2 swaps: Swap@") || !arm.in("cluster_"+e.to) {
			t.Errorf("arm %s: %q", e.to, arm.attrs["label"])
		}
		var leaves, swaps int
		for _, id := range g.order {
			n := g.nodes[id]
			if n.in("cluster_"+e.to) && strings.HasPrefix(n.attrs["class"], "transfer") {
				leaves++
				if strings.Contains(n.attrs["label"], "⇄ Swap@") {
					swaps++
				}
				if !strings.Contains(n.attrs["label"], "WETH") && !strings.Contains(n.attrs["label"], "⇄") {
					t.Errorf("transfer %s of arm %s is neither the WETH entry nor a swap: %q", id, e.to, n.attrs["label"])
				}
			}
		}
		if leaves != 3 || swaps != 2 {
			t.Errorf("arm %s: %d transfers, %d swaps; want 3 and 2", e.to, leaves, swaps)
		}
	}
	if arms != 3 {
		t.Errorf("%d arms", arms)
	}
	for _, id := range g.order {
		n := g.nodes[id]
		if strings.Contains(n.attrs["label"], "↩ return Swap@") && strings.Contains(n.attrs["label"], "hub") && n.in(cyc) {
			hubs++
		}
	}
	if hubs != 1 {
		t.Errorf("%d hub returns, want 1", hubs)
	}
	// The transfer graph: sender, bot, six arm pools and the hub.
	tg, err := parseDOT(show.TransferGraphDOT(cfg, a))
	if err != nil {
		t.Fatal(err)
	}
	if len(tg.nodes) != 9 || tg.countClass("pool") != 7 || tg.countClass("sender") != 1 || tg.countClass("recipient") != 1 {
		t.Errorf("%d nodes, %d pools, want 9 and 7", len(tg.nodes), tg.countClass("pool"))
	}
	inCycle := 0
	for _, e := range tg.edges {
		if strings.Contains(e.attrs["label"], "C9") && strings.Contains(e.attrs["class"], "arbitrage") {
			inCycle++
		}
	}
	if inCycle != 10 {
		t.Errorf("%d edges in the cycle, want 10", inCycle)
	}
	if !strings.Contains(tg.attrs["label"], "verdict ARBITRAGE (confirmed)") || !strings.Contains(tg.attrs["label"], "net profit +0.001692744443204174 ETH") ||
		!strings.Contains(tg.attrs["label"], "C9 arbitrage at 0xbfee…db74  δ +0.002300456209601114 WETH") {
		t.Errorf("graph label:\n%s", tg.attrs["label"])
	}
}

// Golden pictures of two scenarios; go test -update rewrites them.
func TestDOTGolden(t *testing.T) {
	cfg := DefaultConfig()
	for _, name := range []string{"two_pool_arb", "star_r"} {
		a := loadTraces(t, cfg, "../../examples/scenarios/geth/"+name+".json")[0].a
		for _, v := range []struct {
			view string
			dot  string
		}{{"graph", show.TransferGraphDOT(cfg, a)}, {"tree", show.NormalFormDOT(cfg, a)}} {
			golden := filepath.Join("testdata", "dot", name+"."+v.view+".dot")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(v.dot), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./normalform -run TestDOTGolden -update creates it)", err)
			}
			if string(want) != v.dot {
				t.Errorf("%s differs from %s (go test -update rewrites it after review):\n%s", v.view, golden, textdiff.FirstLine(string(want), v.dot))
			}
		}
	}
}

// Hostile display text: a token symbol with quotes, backslashes, a
// newline, braces, a tab, invalid UTF-8 and non-ASCII letters.
func TestDOTEscaping(t *testing.T) {
	weird := "Q\"}{;\\n\\\nΩ€\t<b>&\xff"
	base := Networks[1]
	net := &Network{ID: 1, Name: "test", NativeSymbol: "ETH", WrappedNative: base.WrappedNative, Tokens: map[Address]TokenInfo{}}
	for k, v := range base.Tokens {
		net.Tokens[k] = v
	}
	all := loadTraces(t, DefaultConfig(), "../../examples/scenarios/geth/two_pool_arb.json")
	a := all[0].a
	var tok Address
	for _, tr := range a.Tx.Transfers {
		if strings.HasPrefix(AddrKey(tr.Token.Addr), "0x4480") {
			tok = tr.Token.Addr
		}
	}
	if tok == (Address{}) {
		t.Fatal("two_pool_arb no longer moves the token 0x4480…")
	}
	net.Tokens[tok] = TokenInfo{Symbol: weird, Decimals: 18}
	cfg := NewConfig(net, nil, nil)
	// The unescaped symbol as a label shows it: \n is a line break, the
	// tab and the invalid byte are replaced.
	shown := strings.NewReplacer("\t", "\uFFFD", "\xff", "\uFFFD").Replace(weird)
	for _, src := range []string{show.TransferGraphDOT(cfg, a), show.NormalFormDOT(cfg, a)} {
		g, err := parseDOT(src)
		if err != nil {
			t.Fatalf("escaping broke the syntax: %v\n%s", err, src)
		}
		found := false
		for _, id := range g.order {
			if strings.Contains(g.nodes[id].attrs["label"], shown) {
				found = true
			}
		}
		for _, e := range g.edges {
			if strings.Contains(e.attrs["label"], shown) {
				found = true
			}
		}
		if !found {
			t.Errorf("no label shows the symbol %q", shown)
		}
		if strings.Contains(src, "\t") || strings.Contains(src, "\xff") {
			t.Error("a raw tab or invalid byte reached the DOT text")
		}
	}
}

// A transaction without transfers draws an empty but valid picture.
func TestDOTEmpty(t *testing.T) {
	cfg := DefaultConfig()
	tx := &Tx{}
	tx.Meta.HasFrom, tx.Meta.From = true, common.HexToAddress("0x1111111111111111111111111111111111111111")
	a, err := Analyze(tx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, err := parseDOT(show.TransferGraphDOT(cfg, a))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.nodes) != 1 || len(g.edges) != 0 || g.countClass("sender") != 1 {
		t.Errorf("empty transfer graph: %d nodes, %d edges", len(g.nodes), len(g.edges))
	}
	g, err = parseDOT(show.NormalFormDOT(cfg, a))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.nodes) != 1 || !strings.Contains(g.nodes["nf"].attrs["label"], "no transfer survives") {
		t.Errorf("empty normal form: %v", g.order)
	}
	if !strings.Contains(g.attrs["label"], "verdict NONE") || !regexp.MustCompile(`hash unknown`).MatchString(g.attrs["label"]) {
		t.Errorf("label %q", g.attrs["label"])
	}
}
