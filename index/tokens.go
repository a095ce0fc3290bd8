package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform"
)

// The index's token dictionary: the symbols and decimals the node gave
// for tokens no built-in table knows (`flowq ingest --rpc` asks each
// token's symbol() and decimals()). It is a JSON file beside the
// database, written whole (a temporary file renamed over it) by the
// process that holds the index.

// TokensFile is the dictionary's file name in the index directory.
const TokensFile = "flowq.tokens.json"

type tokenEntry struct {
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
}

// Tokens reads the token dictionary (empty when there is none).
func (ix *Index) Tokens() (map[normalform.Address]normalform.TokenInfo, error) {
	return ReadTokens(ix.path)
}

// ReadTokens reads the token dictionary of the index at dir.
func ReadTokens(dir string) (map[normalform.Address]normalform.TokenInfo, error) {
	out := map[normalform.Address]normalform.TokenInfo{}
	b, err := os.ReadFile(filepath.Join(dir, TokensFile))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]tokenEntry
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, TokensFile), err)
	}
	for k, e := range m {
		if !common.IsHexAddress(k) || e.Symbol == "" {
			return nil, fmt.Errorf("%s: entry %q: want a token address and a symbol", filepath.Join(dir, TokensFile), k)
		}
		out[common.HexToAddress(k)] = normalform.TokenInfo{Symbol: e.Symbol, Decimals: e.Decimals}
	}
	return out, nil
}

// AddTokens adds entries to the token dictionary (an address already in
// it keeps its entry).
func (ix *Index) AddTokens(add map[normalform.Address]normalform.TokenInfo) error {
	if ix.readOnly {
		return errors.New("the index is open read-only: the token dictionary cannot be written")
	}
	if len(add) == 0 {
		return nil
	}
	have, err := ix.Tokens()
	if err != nil {
		return err
	}
	m := map[string]tokenEntry{}
	for a, ti := range have {
		m[normalform.AddrKey(a)] = tokenEntry{ti.Symbol, ti.Decimals}
	}
	for a, ti := range add {
		if _, ok := have[a]; !ok {
			m[normalform.AddrKey(a)] = tokenEntry{ti.Symbol, ti.Decimals}
		}
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	path := filepath.Join(ix.path, TokensFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TokensIn lists the fungible tokens the transactions of a block range
// touch, sorted, without duplicates.
func (ix *Index) TokensIn(ctx context.Context, blocks BlockRange) ([]normalform.Address, error) {
	seen := map[normalform.Address]bool{}
	err := ix.Records(ctx, blocks, func(r *Record) error {
		for _, t := range r.Tokens {
			if t.Kind == normalform.Fungible {
				seen[t.Addr] = true
			}
		}
		return nil
	})
	out := make([]normalform.Address, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(string(out[i][:]), string(out[j][:])) < 0 })
	return out, err
}
