package evmnode

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// rpcCall is a minimal JSON-RPC client (this package's tests must not
// depend on flowq's fetcher).
func rpcCall(t *testing.T, url, method string, params ...any) json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	resp, err := http.Post(url, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		t.Fatalf("%s: %s", method, out.Error.Message)
	}
	return out.Result
}

func TestNodeMinesAndTraces(t *testing.T) {
	n, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !strings.HasPrefix(n.URL(), "http://127.0.0.1:") {
		t.Fatalf("endpoint %s is not on loopback", n.URL())
	}
	from, to := Key(0), crypto.PubkeyToAddress(Key(1).PublicKey)
	tx := types.MustSignNewTx(from, n.Signer(), &types.DynamicFeeTx{
		ChainID: big.NewInt(ChainID), Nonce: 0, GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11),
		Gas: 21000, To: &to, Value: big.NewInt(12345),
	})
	b, err := n.Mine(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	if b.NumberU64() != 1 || b.Time() != GenesisTime+BlockInterval || b.Coinbase() != Coinbase {
		t.Fatalf("block %d time %d coinbase %s", b.NumberU64(), b.Time(), b.Coinbase())
	}
	res := rpcCall(t, n.URL(), "debug_traceTransaction", tx.Hash(), map[string]any{"tracer": "callTracer", "tracerConfig": map[string]any{"withLog": true}})
	if !strings.Contains(string(res), `"value":"0x3039"`) {
		t.Fatalf("callTracer result %s", res)
	}
	flat := rpcCall(t, n.URL(), "debug_traceTransaction", tx.Hash(), map[string]any{"tracer": "flatCallTracer"})
	if !strings.Contains(string(flat), `"traceAddress":[]`) {
		t.Fatalf("flatCallTracer result %s", flat)
	}
	// Determinism: a second node given the same transaction builds the same block.
	n2, err := Start(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	b2, err := n2.Mine(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	if b2.Hash() != b.Hash() {
		t.Fatalf("same transactions, different blocks: %s and %s", b.Hash(), b2.Hash())
	}
}
