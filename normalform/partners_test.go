package normalform_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// partnerTxs are generated trees that exercise the root's node rules.
func partnerTxs() []*normalform.Tx {
	var txs []*normalform.Tx
	for s := int64(0); s < 1500; s++ {
		r := rand.New(rand.NewSource(s))
		txs = append(txs, gen.RandomTx(r, false))
		if s%4 == 0 {
			tx, _ := gen.RandomRoute(r)
			txs = append(txs, tx)
		}
	}
	for _, sh := range gen.Shapes {
		for _, n := range []int{4, 9, 24} {
			for seed := int64(1); seed <= 3; seed++ {
				txs = append(txs, sh.Build(n, seed))
			}
		}
	}
	return txs
}

// TestTrackerPartnersAllPairs checks the root tracker's candidates, which
// are derived from the node rules' junctions in the rule table, against an
// all-pairs scan: before every node step, every pair of the root's kids on
// which a node rule fires must be a pair of candidates, both ways.
func TestTrackerPartnersAllPairs(t *testing.T) {
	cfg := normalform.DefaultConfig()
	total := 0
	for i, tx := range partnerTxs() {
		n, err := normalform.CheckPartners(tx, cfg, nil)
		if err != nil {
			t.Fatalf("tree %d: %v", i, err)
		}
		total += n
	}
	if total < 1000 {
		t.Fatalf("only %d firing pairs checked", total)
	}
	t.Logf("%d firing pairs, all among the tracker's candidates", total)
}

// TestTrackerPartnersDroppedJunction is the check's own test: with any one
// junction of a node rule left out of the table the candidates are derived
// from, the all-pairs scan finds a firing pair the tracker misses.
func TestTrackerPartnersDroppedJunction(t *testing.T) {
	cfg := normalform.DefaultConfig()
	txs := partnerTxs()
	js := normalform.NodeJunctions()
	if len(js) != 4 {
		t.Fatalf("%d junctions of node rules, want 4 (R11 one, R12 two, R13 one)", len(js))
	}
	for _, j := range js {
		t.Run(fmt.Sprintf("%s/%d", j.Rule, j.Meet), func(t *testing.T) {
			for _, tx := range txs {
				if _, err := normalform.CheckPartners(tx, cfg, &j); err != nil {
					t.Logf("caught: %v", err)
					return
				}
			}
			t.Fatalf("dropping %s's junction %d went unnoticed", j.Rule, j.Meet)
		})
	}
}
