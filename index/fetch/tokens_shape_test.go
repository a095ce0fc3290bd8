package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestTokenInfoOneHostileToken: a token whose symbol() reverts with data
// over MaxErrorBytes has the whole batch's answer refused (an
// AnswerShapeError fails every call of it); the batch's tokens are then
// asked one at a time, so the other tokens are still named and only the
// hostile one is left out.
func TestTokenInfoOneHostileToken(t *testing.T) {
	var tokens []normalform.Address
	for i := range 10 {
		var a normalform.Address
		a[0], a[19] = 0xaa, byte(i+1)
		tokens = append(tokens, a)
	}
	hostile := normalform.AddrKey(tokens[3])
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		var batch []rpcReq
		if err := json.Unmarshal(body, &batch); err != nil {
			var one rpcReq
			_ = json.Unmarshal(body, &one)
			batch = []rpcReq{one}
		}
		var out []map[string]any
		for _, q := range batch {
			var call struct{ To, Data string }
			_ = json.Unmarshal(q.Params[0], &call)
			resp := map[string]any{"jsonrpc": "2.0", "id": q.ID}
			switch {
			case call.To == hostile && call.Data == selSymbol:
				// execution reverted, with 40 KB of revert data (80 KB of hex)
				resp["error"] = map[string]any{"code": 3, "message": "execution reverted", "data": "0x" + strings.Repeat("ab", 40<<10)}
			case call.Data == selSymbol:
				resp["result"] = abiString(fmt.Sprintf("T%s", call.To[len(call.To)-2:]))
			default:
				resp["result"] = word(18)
			}
			out = append(out, resp)
		}
		w.Header().Set("Content-Type", "application/json")
		if len(out) == 1 && !strings.HasPrefix(strings.TrimSpace(string(body)), "[") {
			_ = json.NewEncoder(w).Encode(out[0])
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	got, err := dial(t, srv.URL, quick(Geth)).TokenInfo(context.Background(), tokens)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(tokens)-1 {
		t.Fatalf("%d tokens named, want %d (all but the hostile one): %v", len(got), len(tokens)-1, got)
	}
	if _, ok := got[tokens[3]]; ok {
		t.Errorf("the hostile token is named: %v", got[tokens[3]])
	}
	for i, a := range tokens {
		if i == 3 {
			continue
		}
		want := normalform.TokenInfo{Symbol: fmt.Sprintf("T%02x", i+1), Decimals: 18}
		if got[a] != want {
			t.Errorf("token %d: %v, want %v", i, got[a], want)
		}
	}
	// The batch once, then each of its ten tokens alone (no retry: the
	// refusal is not transient).
	if n := requests.Load(); n != 11 {
		t.Errorf("%d requests, want 11", n)
	}
}
