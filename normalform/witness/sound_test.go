package witness_test

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/trace"
	"github.com/flowq/flowq/normalform/witness"
)

// soundness checks Theorem "Soundness" on one transaction, for every path:
// every detection the engine reports (on which an Arbitrage verdict rests)
// carries a witness that Verify accepts, and the independent checker,
// reading only the transaction's transfers, finds a Definition 5 witness
// at that origin on its own.
// It returns how many counted cycles it checked and how many of their
// witnesses are a single connected walk.
func soundness(t *testing.T, name string, tx *normalform.Tx, cfg *normalform.Config) (checked, single int) {
	t.Helper()
	a, err := normalform.Analyze(tx, cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ts := normalform.CheckerTransfers(tx.Transfers)
	for i := range a.Detections {
		det := &a.Detections[i]
		v := det.Origin
		if det.Witness == nil {
			t.Errorf("%s: detection %d (%s at %s) carries no witness", name, i, det.Path, v.Hex())
			continue
		}
		if err := witness.Verify(ts, cfg.TokenEq, det.Witness); err != nil {
			t.Errorf("%s: the carried witness does not verify: %v", name, err)
		}
		w, found, exhausted := witness.Find(ts, cfg.TokenEq, &v, 1_000_000)
		if !found {
			t.Errorf("%s: the engine reports %s arbitrage at %s but no Definition 5 witness exists (exhausted=%v)", name, det.Path, v.Hex(), exhausted)
			continue
		}
		if err := witness.Verify(ts, cfg.TokenEq, w); err != nil {
			t.Errorf("%s: witness does not verify: %v", name, err)
		}
		checked++
		if len(w.Pieces) == 1 {
			single++
		}
	}
	return checked, single
}

func TestSoundnessOnCorpus(t *testing.T) {
	cfg := normalform.DefaultConfig()
	files, _ := filepath.Glob("../trace/testdata/corpus/*/*/*.json")
	if len(files) != 26 {
		t.Fatalf("found %d corpus files", len(files))
	}
	checked, single := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range trace.Decode(data, trace.Options{Config: cfg}).Txs {
			c, s := soundness(t, tx.Meta.Hash.Hex(), tx, cfg)
			checked, single = checked+c, single+s
		}
	}
	if checked != 6 || single != checked {
		t.Errorf("corpus: %d counted cycles checked (want the 6 labelled arbitrages found), %d with a single-walk witness (want all)", checked, single)
	}
}

func TestSoundnessOnGeneratedTrees(t *testing.T) {
	cfg := normalform.DefaultConfig()
	r := rand.New(rand.NewSource(11))
	checked, single := 0, 0
	for i := 0; i < 3000; i++ {
		c, s := soundness(t, "random tree", gen.RandomTx(r, false), cfg)
		checked, single = checked+c, single+s
	}
	for i := 0; i < 2000; i++ {
		tx, _ := gen.RandomRoute(r)
		c, s := soundness(t, "random route", tx, cfg)
		checked, single = checked+c, single+s
	}
	b := &gen.Builder{}
	c, s := soundness(t, "tx_R", b.Tx("EOA", "SC", 0, gen.TxR(b, [][2]string{{"CHAD", "0.0125"}, {"DUCK", "0.0333"}, {"MOON", "0.0117"}}, "BEAN", "BEAN/WETH")), cfg)
	checked, single = checked+c, single+s
	t.Logf("%d counted arbitrage cycles checked, %d with a single-walk witness", checked, single)
	if checked < 1000 {
		t.Errorf("only %d counted cycles: the generators exercise too little", checked)
	}
}
