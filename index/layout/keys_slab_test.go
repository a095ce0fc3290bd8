package layout

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// keysPerKey is Record.Keys as it was before the slab (session 5): one
// Key.Bytes a key (and, as since, no addr key for the recipient). The
// slab path must write the same keys, values and order.
func keysPerKey(r *Record, enc []byte, id IDs) []KV {
	var out []KV
	add := func(k Key) { out = append(out, KV{k.Bytes(), nil}) }
	out = append(out, KV{TxKey(r.Loc).Bytes(), enc})
	out = append(out, KV{NFKey(r.Loc).Bytes(), r.NFValue()})
	for l := normalform.Exact; l <= normalform.Family; l++ {
		add(HashKey(l, Short(r.Hashes.Of(l)), id[l], r.Loc))
	}
	add(BotKey(r.Recipient, id[normalform.Shape], r.Loc))
	add(VerdictKey(r.Verdict, r.Tier, r.Loc))
	for _, a := range r.Gross {
		add(ProfitKey(Gross, a.Token, a.Amount, r.Loc))
	}
	if r.CostsKnown {
		for _, a := range r.Net {
			if !r.GrossHas(a) {
				add(ProfitKey(Net, a.Token, a.Amount, r.Loc))
			}
		}
	}
	for _, a := range r.Addresses {
		if a != r.Recipient {
			add(AddrKey(a, r.Loc))
		}
	}
	for _, t := range r.Tokens {
		add(TokenKey(t, r.Loc))
	}
	return out
}

// scenarioRecords builds the record of every geth scenario, and of each
// the same at an unknown index and at an unknown position (keys with the
// 40-byte loc).
func scenarioRecords(t *testing.T) map[string]*Record {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "scenarios", "geth")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	out := map[string]*Record{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		res := trace.Decode(data, trace.Options{Config: cfg, Source: e.Name()})
		for i, tx := range res.Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatalf("%s tx %d: %v", e.Name(), i, err)
			}
			rec, err := NewRecord(a, 0)
			if err != nil {
				t.Fatalf("%s tx %d: %v", e.Name(), i, err)
			}
			name := e.Name() + "#" + string(rune('0'+i))
			checkSets(t, name, a, rec)
			out[name] = rec
			u := *rec
			u.Loc = Loc{Block: rec.Loc.Block, Index: UnknownIndex, Tx: rec.Hash}
			out[name+" index unknown"] = &u
			v := *rec
			v.Loc = Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: rec.Hash}
			out[name+" position unknown"] = &v
		}
	}
	if len(out) < 3*40 {
		t.Fatalf("%d scenario records, want at least 120", len(out))
	}
	return out
}

func TestKeysSlabSameAsPerKey(t *testing.T) {
	id := IDs{normalform.Shape: 7, normalform.Tokens: 0x01020304, normalform.Family: 1 << 30}
	recs := scenarioRecords(t)
	for name, rec := range recs {
		enc := []byte("record value")
		want := keysPerKey(rec, enc, id)
		sameKeys(t, name, rec.Keys(enc, id), want)
		// The analysers' part (Encoded.Fixed) joined by the writer's.
		sameKeys(t, name+" with its fixed keys", rec.KeysWith(rec.FixedKeys(), enc, id), want)
	}
	// Fixed keys built at another position are not taken: the record's
	// own are built (a record moved after its encoding).
	for name, rec := range recs {
		if strings.Contains(name, "unknown") {
			continue
		}
		moved := *rec
		moved.Loc.Index++
		sameKeys(t, name+" moved", moved.KeysWith(rec.FixedKeys(), nil, id), keysPerKey(&moved, nil, id))
	}
}

// sameKeys checks keys against want (keys, values, order), that every
// key parses, and that each key is its own.
func sameKeys(t *testing.T, name string, got, want []KV) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d keys, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].K, want[i].K) || !bytes.Equal(got[i].V, want[i].V) {
			t.Fatalf("%s: key %d is %x = %x, want %x = %x", name, i, got[i].K, got[i].V, want[i].K, want[i].V)
		}
		if _, err := ParseKey(got[i].K); err != nil {
			t.Fatalf("%s: key %d: %v", name, i, err)
		}
	}
	// A key is its own: appending to one does not change the next.
	for i := 0; i+1 < len(got); i++ {
		next := append([]byte(nil), got[i+1].K...)
		_ = append(got[i].K, 0xee)
		if !bytes.Equal(got[i+1].K, next) {
			t.Fatalf("%s: appending to key %d changed key %d", name, i, i+1)
		}
	}
}

// TestKeysAllocations: the keys of a record are built without an
// allocation per key (two slabs, two slices of keys, the fixed keys and
// the NF value; the tags' hashing allocates nothing).
func TestKeysAllocations(t *testing.T) {
	id := IDs{normalform.Shape: 7, normalform.Tokens: 8, normalform.Family: 9}
	for name, rec := range scenarioRecords(t) {
		if strings.Contains(name, "unknown") {
			continue
		}
		n := len(rec.Keys(nil, id))
		allocs := testing.AllocsPerRun(20, func() { rec.Keys(nil, id) })
		base := testing.AllocsPerRun(20, func() { rec.NFValue() })
		if allocs-base > 6 {
			t.Errorf("%s: %.0f allocations for %d keys (NF value alone %.0f), want at most 6 more than the NF value", name, allocs, n, base)
		}
		// The writer's part, given the analysers': two (its slab and
		// the slice of keys), whatever the record's size.
		f := rec.FixedKeys()
		if w := testing.AllocsPerRun(20, func() { rec.KeysWith(f, nil, id) }); w > 2 {
			t.Errorf("%s: KeysWith given the fixed keys made %.0f allocations, want at most 2", name, w)
		}
	}
}

// checkSets compares a record's addresses and tokens with the map and
// sort.Slice NewRecord used before session 5.
func checkSets(t *testing.T, name string, a *normalform.Analysis, rec *Record) {
	t.Helper()
	m := &a.Tx.Meta
	addrs := map[normalform.Address]bool{a.Recipient: true}
	toks := map[normalform.Token]bool{}
	if m.HasFrom {
		addrs[m.From] = true
	}
	if m.HasTo {
		addrs[m.To] = true
	}
	for _, tr := range a.Tx.Transfers {
		addrs[tr.From], addrs[tr.To] = true, true
		toks[NormalToken(tr.Token)] = true
	}
	var wantA []normalform.Address
	var wantT []normalform.Token
	for x := range addrs {
		wantA = append(wantA, x)
	}
	for x := range toks {
		wantT = append(wantT, x)
	}
	sort.Slice(wantA, func(i, j int) bool { return bytes.Compare(wantA[i][:], wantA[j][:]) < 0 })
	sort.Slice(wantT, func(i, j int) bool { return bytes.Compare(appendToken(nil, wantT[i]), appendToken(nil, wantT[j])) < 0 })
	if !reflect.DeepEqual(rec.Addresses, wantA) || !reflect.DeepEqual(rec.Tokens, wantT) {
		t.Fatalf("%s: addresses %v tokens %v, want %v %v", name, rec.Addresses, rec.Tokens, wantA, wantT)
	}
}
