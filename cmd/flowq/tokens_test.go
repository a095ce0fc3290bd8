package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
)

// TestTokenDictionary: a token the index's dictionary names (what a node
// said at `ingest --rpc`) prints by its symbol, in its decimals, in a
// query's table; the JSON stays in base units and addresses.
func TestTokenDictionary(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", idx, "../../examples/scenarios/geth"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	ix, err := index.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	// A token of a stored gross balance that no table knows.
	cfg := normalform.DefaultConfig()
	var tok normalform.Address
	var tx string
	err = ix.Records(context.Background(), index.AllBlocks, func(r *index.Record) error {
		for _, a := range r.Gross {
			if _, known := cfg.TokenInfo(a.Token); !known && tx == "" && a.Token.Kind == normalform.Fungible {
				tok, tx = a.Token.Addr, r.Hash.Hex()
			}
		}
		return nil
	})
	if err == nil {
		err = ix.AddTokens(map[normalform.Address]normalform.TokenInfo{tok: {Symbol: "ZZTOK", Decimals: 2}})
	}
	ix.Close()
	if err != nil || tx == "" {
		t.Fatalf("no unknown token in a gross balance (%v)", err)
	}
	before := normalform.AddrKey(tok)
	out, errs, code := flowq(t, nil, "", "query", "--index", idx, "find transactions")
	if code != 0 || !strings.Contains(out, " ZZTOK") {
		t.Errorf("the table does not name the token: exit %d: %s%s", code, out, errs)
	}
	out, _, _ = flowq(t, nil, "", "query", "--index", idx, "--format", "json", "find transactions")
	if !strings.Contains(out, `"`+before+`":"`) || strings.Contains(out, "ZZTOK") {
		t.Errorf("JSON: %s", out)
	}
}
