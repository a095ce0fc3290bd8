package normalform_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"hash"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/trace"
)

// The byte-identity check of issue 16: for every transaction the
// repository carries (the trace corpus, the even-split bundles, the
// examples' mainnet bundles, the scenario bundles of both tracers) and for
// 40,000 generated trees with fixed seeds, the normal form's encoding
// (EncodeNF, which holds the step log's encoding), the step log as text
// (rule, frame, operands, result and note) and the four structural hashes
// are hashed into one SHA-256 per source set. The digests are kept in
// testdata/identity.golden; a refactor of the kernel, its rules or the
// encoding must leave them unchanged. `go test ./normalform -run
// TestByteIdentity -update` rewrites the file (only for a change of
// output that is meant).

const identityGolden = "testdata/identity.golden"

// identitySet is one source set: a name and a function that feeds every
// transaction of the set to add, in a fixed order.
type identitySet struct {
	name string
	each func(t *testing.T, add func(tx *Tx))
}

// Generated trees: 40,000 in all, each from its own seed.
const (
	identityRandom = 28000 // gen.RandomTx, every 25th with huge amounts
	identityRoutes = 12000 // gen.RandomRoute
)

func identitySets() []identitySet {
	files := func(globs ...string) func(t *testing.T, add func(tx *Tx)) {
		return func(t *testing.T, add func(tx *Tx)) {
			var names []string
			for _, g := range globs {
				m, err := filepath.Glob(g)
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, m...)
			}
			if len(names) == 0 {
				t.Fatalf("no files match %v", globs)
			}
			cfg := DefaultConfig()
			for _, name := range names {
				data := readMaybeGzip(t, name)
				res := trace.Decode(data, trace.Options{Config: cfg})
				if len(res.Txs) == 0 {
					t.Fatalf("%s: no transaction decoded", name)
				}
				for _, tx := range res.Txs {
					add(tx)
				}
			}
		}
	}
	return []identitySet{
		{"corpus", files("trace/testdata/corpus/*/*/*.json", "trace/testdata/evensplit/*.json.gz")},
		{"mainnet", files("../examples/mainnet/*.json")},
		{"scenarios", files("../examples/scenarios/geth/*.json", "../examples/scenarios/parity/*.json")},
		{"random", func(t *testing.T, add func(tx *Tx)) {
			for s := int64(0); s < identityRandom; s++ {
				add(gen.RandomTx(rand.New(rand.NewSource(s)), s%25 == 0))
			}
		}},
		{"routes", func(t *testing.T, add func(tx *Tx)) {
			for s := int64(0); s < identityRoutes; s++ {
				tx, _ := gen.RandomRoute(rand.New(rand.NewSource(1_000_000 + s)))
				add(tx)
			}
		}},
	}
}

func readMaybeGzip(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// identityAdd writes one transaction's analysis into h: its encoding, its
// steps as text and its hashes, each length-prefixed so that no two
// sequences of records hash alike.
func identityAdd(h hash.Hash, cfg *Config, tx *Tx) {
	field := func(b []byte) {
		h.Write(binary.AppendUvarint(nil, uint64(len(b))))
		h.Write(b)
	}
	a, err := Analyze(tx, cfg)
	if err != nil {
		field([]byte("error: " + err.Error()))
		return
	}
	field(EncodeNF(a))
	field(binary.AppendUvarint(nil, uint64(len(a.Steps))))
	for _, s := range a.Steps {
		field([]byte(s.String()))
	}
	hs := a.Hashes()
	for _, x := range []Hash{hs.Exact, hs.Shape, hs.Tokens, hs.Family} {
		field(x[:])
	}
}

func TestByteIdentity(t *testing.T) {
	cfg := DefaultConfig()
	var out strings.Builder
	for _, set := range identitySets() {
		h := sha256.New()
		n := 0
		set.each(t, func(tx *Tx) {
			identityAdd(h, cfg, tx)
			n++
		})
		fmt.Fprintf(&out, "%s %d %s\n", set.name, n, hex.EncodeToString(h.Sum(nil)))
	}
	if *update {
		if err := os.WriteFile(identityGolden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(identityGolden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("normal forms, step logs or hashes changed:\n got\n%s want\n%s", got, want)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")
