package fetch

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/normalform"
)

// ERC-20's optional metadata: the selectors of symbol() and decimals().
const (
	selSymbol   = "0x95d89b41"
	selDecimals = "0x313ce567"
)

// TokenInfo asks each token contract for symbol() and decimals() (eth_call
// at the latest block, in batches). A token that answers neither, or what
// is no symbol (empty, over 32 bytes, not printable) or no decimals (over
// 255), is left out: many contracts have no metadata. The error is the
// node's when no token answered at all.
func (c *Client) TokenInfo(ctx context.Context, tokens []normalform.Address) (map[normalform.Address]normalform.TokenInfo, error) {
	out := map[normalform.Address]normalform.TokenInfo{}
	const per = 50
	for lo := 0; lo < len(tokens); lo += per {
		hi := min(lo+per, len(tokens))
		reqs := make([]Request, 0, 2*(hi-lo))
		res := make([]hexutil.Bytes, 2*(hi-lo))
		for i, t := range tokens[lo:hi] {
			to := normalform.AddrKey(t)
			reqs = append(reqs,
				Request{Method: "eth_call", Args: []any{map[string]string{"to": to, "data": selSymbol}, "latest"}, Result: &res[2*i], Target: "symbol() of " + to},
				Request{Method: "eth_call", Args: []any{map[string]string{"to": to, "data": selDecimals}, "latest"}, Result: &res[2*i+1], Target: "decimals() of " + to})
		}
		err := c.Batch(ctx, reqs)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		// One token can have the whole answer refused (a revert whose
		// data passes MaxErrorBytes: an AnswerShapeError fails every call
		// of the batch): its tokens are asked again one at a time, so
		// that the others are named.
		var shape *AnswerShapeError
		if hi-lo > 1 && errors.As(err, &shape) {
			for i := range hi - lo {
				_ = c.Batch(ctx, reqs[2*i:2*i+2]) // each call's failure is in its Err
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
			}
		}
		answered := false
		for i, t := range tokens[lo:hi] {
			if reqs[2*i].Err != nil || reqs[2*i+1].Err != nil {
				continue
			}
			answered = true
			sym, ok1 := abiSymbol(res[2*i])
			dec, ok2 := abiDecimals(res[2*i+1])
			if ok1 && ok2 {
				out[t] = normalform.TokenInfo{Symbol: sym, Decimals: dec}
			}
		}
		if err != nil && !answered && len(out) == 0 {
			return out, err
		}
	}
	return out, nil
}

// abiSymbol reads symbol()'s answer: an ABI string, or a bytes32 (older
// tokens, MKR), zero-padded.
func abiSymbol(b []byte) (string, bool) {
	var s []byte
	switch {
	case len(b) == 32:
		s = []byte(strings.TrimRight(string(b), "\x00"))
	case len(b) >= 64:
		off := new(big.Int).SetBytes(b[:32])
		if !off.IsUint64() || off.Uint64() > uint64(len(b))-32 {
			return "", false
		}
		o := off.Uint64()
		n := new(big.Int).SetBytes(b[o : o+32])
		if !n.IsUint64() || n.Uint64() > uint64(len(b))-o-32 {
			return "", false
		}
		s = b[o+32 : o+32+n.Uint64()]
	default:
		return "", false
	}
	sym := strings.TrimSpace(string(s))
	if sym == "" || len(sym) > 32 || !utf8.ValidString(sym) {
		return "", false
	}
	for _, r := range sym {
		if !unicode.IsPrint(r) {
			return "", false
		}
	}
	return sym, true
}

// abiDecimals reads decimals()'s answer: a uint8 in 32 bytes.
func abiDecimals(b []byte) (uint8, bool) {
	if len(b) < 32 {
		return 0, false
	}
	n := new(big.Int).SetBytes(b[:32])
	if !n.IsUint64() || n.Uint64() > 255 {
		return 0, false
	}
	return uint8(n.Uint64()), true
}

// NameTokens asks the node for the symbol and decimals of every token the
// block range's transactions touch that cfg does not know and the
// index's dictionary does not hold, and adds the answers to the
// dictionary. It returns how many it named.
func (c *Client) NameTokens(ctx context.Context, ix *index.Index, cfg *normalform.Config, from, to uint64) (int, error) {
	all, err := ix.TokensIn(ctx, index.Blocks(from, to))
	if err != nil {
		return 0, err
	}
	have, err := ix.Tokens()
	if err != nil {
		return 0, err
	}
	var ask []normalform.Address
	for _, a := range all {
		if _, known := cfg.TokenInfo(normalform.FungibleToken(a)); known {
			continue
		}
		if _, held := have[a]; !held {
			ask = append(ask, a)
		}
	}
	if len(ask) == 0 {
		return 0, nil
	}
	got, err := c.TokenInfo(ctx, ask)
	if err != nil {
		return 0, err
	}
	return len(got), ix.AddTokens(got)
}
