package gen

import (
	"fmt"
	"math/rand"

	"github.com/flowq/flowq/normalform"
)

// The scale generators build synthetic transactions of a given number of
// transfers for the growth benchmarks (issue 8). They are shapes, not
// mainnet data: addresses and tokens are generated names.

// Shapes lists the scale shapes by name, for the benchmarks.
var Shapes = []struct {
	Name  string
	Build func(n int, seed int64) *normalform.Tx
}{
	{"star", StarTx},
	{"chain", ChainTx},
	{"random", ScaleRandomTx},
}

// StarTx builds a star with n/2 arms around the bot SC: in each arm SC pays
// WETH into its own pool (in a frame of its own) and the pool pays its
// token back from a nested callback frame, so that the two legs of an arm
// are not siblings in T0 and meet only after the frames are lifted. About
// n transfers.
func StarTx(n int, seed int64) *normalform.Tx { return compact(starTx(n, seed)) }

// starTx is StarTx before compact: the tree as the Builder made it.
func starTx(n int, seed int64) *normalform.Tx {
	r := rand.New(rand.NewSource(seed))
	b := &Builder{}
	var kids []*normalform.Node
	for i := 0; len(kids)*2 < n; i++ {
		pool := fmt.Sprintf("StarPool%d", i)
		tok := fmt.Sprintf("StarTok%d", i%64)
		kids = append(kids, b.F("SC", pool,
			b.T("SC", pool, fmt.Sprint(1+r.Intn(100)), "WETH", "SC"),
			b.F(pool, "SC", b.F("SC", tok, b.T(pool, "SC", fmt.Sprint(1+r.Intn(1000)), tok, pool))),
			b.Static(pool, tok)))
	}
	return b.Tx("EOA", "SC", 21000, b.F("EOA", "SC", kids...))
}

// ChainTx builds one long route of n transfers: SC pays pool 0, each pool
// pays the next in a different token, from its own frame, and the last
// returns WETH to SC; every hop's frame has a balance check, so that the
// frames stay apart in T0.
func ChainTx(n int, seed int64) *normalform.Tx { return compact(chainTx(n, seed)) }

// chainTx is ChainTx before compact: the tree as the Builder made it.
func chainTx(n int, seed int64) *normalform.Tx {
	r := rand.New(rand.NewSource(seed))
	b := &Builder{}
	kids := []*normalform.Node{b.T("SC", "ChainPool0", "100", "WETH", "SC")}
	for h := 0; h < n-1; h++ {
		pool, next := fmt.Sprintf("ChainPool%d", h), fmt.Sprintf("ChainPool%d", h+1)
		tok := fmt.Sprintf("ChainTok%d", h%97)
		if h == n-2 {
			next, tok = "SC", "WETH"
		}
		kids = append(kids, b.F("SC", pool, b.T(pool, next, fmt.Sprint(1+r.Intn(1000)), tok, pool), b.Static(pool, tok)))
	}
	return b.Tx("EOA", "SC", 21000, b.F("EOA", "SC", kids...))
}

// ScaleRandomTx builds a random tree of about n transfers: nested frames,
// transfers among n/8+6 addresses in 12 tokens (WETH and ETH among them),
// some mints and burns.
func ScaleRandomTx(n int, seed int64) *normalform.Tx { return compact(scaleRandomTx(n, seed)) }

// scaleRandomTx is ScaleRandomTx before compact: the tree as the Builder made it.
func scaleRandomTx(n int, seed int64) *normalform.Tx {
	r := rand.New(rand.NewSource(seed))
	names := []string{"EOA", "SC", "WETH"}
	for i := 0; i < n/8+3; i++ {
		names = append(names, fmt.Sprintf("RndAddr%d", i))
	}
	tokens := []string{"WETH", "ETH"}
	for i := 0; i < 10; i++ {
		tokens = append(tokens, fmt.Sprintf("RndTok%d", i))
	}
	b := &Builder{}
	count := 0
	var frame func(depth int, from, to string) *normalform.Node
	frame = func(depth int, from, to string) *normalform.Node {
		var kids []*normalform.Node
		for i := r.Intn(8); i >= 0 && count < n; i-- {
			if depth < 6 && r.Intn(3) == 0 {
				kids = append(kids, frame(depth+1, to, names[r.Intn(len(names))]))
				continue
			}
			s, d := names[r.Intn(len(names))], names[r.Intn(len(names))]
			var flags []string
			switch r.Intn(10) {
			case 0:
				flags = append(flags, "mint")
			case 1:
				flags = append(flags, "burn")
			}
			kids = append(kids, b.T(s, d, fmt.Sprint(1+r.Intn(1000)), tokens[r.Intn(len(tokens))], names[r.Intn(len(names))], flags...))
			count++
		}
		return b.F(from, to, kids...)
	}
	var top []*normalform.Node
	for count < n {
		top = append(top, frame(1, "SC", names[r.Intn(len(names))]))
	}
	return b.Tx("EOA", "SC", 21000, b.F("EOA", "SC", top...))
}
