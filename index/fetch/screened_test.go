package fetch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// TestScreenedKeeps: a receipts bundle's receipts are kept by transaction
// with the block's header, whose full transactions become their hashes
// (as a trace mode fetches it); a logs bundle (the eth_getLogs fallback)
// keeps nothing; Drop forgets the blocks below it and their bytes; a
// bundle Add cannot read is an error naming the block.
func TestScreenedKeeps(t *testing.T) {
	h1 := "0x" + strings.Repeat("1", 64)
	h2 := "0x" + strings.Repeat("2", 64)
	s := NewScreened()
	b7 := `{"block":{"number":"0x7","hash":"0x` + strings.Repeat("a", 64) + `","transactions":[{"hash":"` + h1 + `","value":"0x1"},{"hash":"` + h2 + `"}]},` +
		`"receipts":[{"transactionHash":"` + h1 + `","status":"0x1"},{"transactionHash":"` + h2 + `","status":"0x0"}]}`
	if err := s.Add(7, []byte(b7)); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(8, []byte(`{"block":{"number":"0x8","transactions":["`+strings.Repeat("3", 64)+`"]},"logs":[]}`)); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2 || s.Bytes() == 0 {
		t.Fatalf("kept %d transactions, %d bytes; want the 2 of block 7", s.Len(), s.Bytes())
	}
	r, hd, ok := s.get(common.HexToHash(h2))
	if !ok || !strings.Contains(string(r), `"status":"0x0"`) {
		t.Fatalf("receipt of %s: %s, %v", h2, r, ok)
	}
	var header struct {
		Number       string   `json:"number"`
		Transactions []string `json:"transactions"`
	}
	if err := json.Unmarshal(hd, &header); err != nil || header.Number != "0x7" || len(header.Transactions) != 2 || header.Transactions[0] != h1 {
		t.Fatalf("header: %s (%v)", hd, err)
	}
	if _, _, ok := s.get(common.HexToHash("0x" + strings.Repeat("3", 64))); ok {
		t.Fatal("a logs bundle's transaction was kept")
	}
	s.Drop(7)
	if s.Len() != 2 {
		t.Fatalf("Drop(7) forgot block 7")
	}
	s.Drop(8)
	if s.Len() != 0 || s.Bytes() != 0 {
		t.Fatalf("after Drop(8): %d transactions, %d bytes", s.Len(), s.Bytes())
	}
	if err := s.Add(9, []byte(`{"block":{"number":"0x9"},"receipts":[{"status":"0x1"}]}`)); err == nil || !strings.Contains(err.Error(), "block 9") {
		t.Fatalf("a receipt without its hash: %v", err)
	}
	var nilS *Screened
	if _, _, ok := nilS.get(common.HexToHash(h1)); ok {
		t.Fatal("a nil Screened holds something")
	}
}
