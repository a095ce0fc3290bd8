package fetch

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// abiString is an ABI-encoded string, as symbol() returns it.
func abiString(s string) string {
	b := make([]byte, 64+((len(s)+31)/32)*32)
	b[31] = 32
	b[63] = byte(len(s))
	copy(b[64:], s)
	return "0x" + hex.EncodeToString(b)
}

func word(n int) string { return fmt.Sprintf("0x%064x", n) }

// TestNameTokens: after an ingest, the node is asked symbol() and
// decimals() of the tokens no table knows (an ABI string, a bytes32, a
// contract with no metadata, decimals out of range), the answers kept in
// the index's dictionary; a second run asks nothing; a node that refuses
// eth_call is an error naming it.
func TestNameTokens(t *testing.T) {
	ix := openIndex(t)
	// The scenario corpus: tokens deployed on a local chain, in no table.
	files, err := ingest.FindJSON("../../examples/scenarios/geth")
	if err != nil || len(files) == 0 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	cfg := normalform.DefaultConfig()
	g := ingest.NewIngester(context.Background(), ix, ingest.Options{Config: cfg})
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Add(ingest.BundleInput(f, b)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := ix.TokensIn(context.Background(), index.AllBlocks)
	if err != nil {
		t.Fatal(err)
	}
	var unknown []normalform.Address
	for _, a := range all {
		if _, ok := cfg.TokenInfo(normalform.FungibleToken(a)); !ok {
			unknown = append(unknown, a)
		}
	}
	if len(unknown) < 2 {
		t.Fatalf("the corpus touches %d tokens no table knows; want 2 or more", len(unknown))
	}
	// The first unknown token answers an ABI string, the second a bytes32;
	// others have no metadata, and one says 300 decimals.
	first, second := normalform.AddrKey(unknown[0]), normalform.AddrKey(unknown[1])
	var calls []string
	node := &fakeNode{answer: func(m string, params []json.RawMessage) any {
		if m != "eth_call" {
			return nil
		}
		var call struct{ To, Data string }
		_ = json.Unmarshal(params[0], &call)
		calls = append(calls, call.To+" "+call.Data)
		switch {
		case call.To == first && call.Data == selSymbol:
			return abiString("CRV3")
		case call.To == second && call.Data == selSymbol:
			return "0x" + hex.EncodeToString([]byte("MKR")) + strings.Repeat("00", 29)
		case call.Data == selDecimals && call.To == first:
			return word(6)
		case call.Data == selDecimals:
			return word(300)
		}
		return nil
	}}
	c, err := Dial(context.Background(), serve(t, node), quick(Geth))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.NameTokens(context.Background(), ix, cfg, 0, ^uint64(0)-1)
	if err != nil || n != 1 {
		t.Fatalf("named %d, %v; want 1 (the second says 300 decimals)", n, err)
	}
	if len(calls) != 2*len(unknown) {
		t.Errorf("%d calls for %d tokens", len(calls), len(unknown))
	}
	dict, err := ix.Tokens()
	if err != nil || len(dict) != 1 || dict[unknown[0]] != (normalform.TokenInfo{Symbol: "CRV3", Decimals: 6}) {
		t.Fatalf("dictionary %v, %v", dict, err)
	}
	cfg.AddTokens(dict)
	if name := cfg.TokenName(normalform.FungibleToken(unknown[0])); name != "CRV3" {
		t.Errorf("token name %q", name)
	}
	// The bytes32 symbol reads, with decimals in range.
	if s, ok := abiSymbol(append([]byte("MKR"), make([]byte, 29)...)); !ok || s != "MKR" {
		t.Errorf("bytes32 symbol: %q %v", s, ok)
	}
	// Again: what the dictionary holds is not asked again.
	calls = nil
	if _, err := c.NameTokens(context.Background(), ix, normalform.DefaultConfig(), 0, ^uint64(0)-1); err != nil {
		t.Fatal(err)
	}
	for _, cl := range calls {
		if strings.HasPrefix(cl, first) {
			t.Errorf("asked again: %s", cl)
		}
	}
	// A node that refuses eth_call.
	refusing := &fakeNode{callErr: func(m string) *rErr { return &rErr{Code: -32601, Message: "the method eth_call does not exist"} }}
	rc, err := Dial(context.Background(), serve(t, refusing), quick(Geth))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.TokenInfo(context.Background(), unknown); err == nil || !strings.Contains(err.Error(), "eth_call") {
		t.Errorf("refusing node: %v", err)
	}
}
