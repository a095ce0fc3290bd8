// Package bundles rewrites the scenario and corpus bundles the tests
// read: ReceiptsOnly is a traced bundle as a receipts-mode fetch saves it.
package bundles

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ReceiptsOnly turns a one-transaction bundle ({"block", "receipts",
// "traces"}; geth's callTracer frame or Parity's flat list) into what
// `flowq fetch --mode receipts` saves: the traces dropped, and the block's
// transaction given as a full object (hash, index, from, to, value: the
// top frame's, as eth_getBlockByNumber(n, true) gives them; a missing
// value is 0x0).
func ReceiptsOnly(raw []byte) ([]byte, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	type frame struct {
		From  string  `json:"from"`
		To    *string `json:"to"`
		Value string  `json:"value"`
	}
	var top frame
	var flat []struct {
		Action       frame `json:"action"`
		TraceAddress []int `json:"traceAddress"`
	}
	if json.Unmarshal(d["traces"], &flat) == nil {
		found := false
		for _, f := range flat {
			if len(f.TraceAddress) == 0 && !found {
				top, found = f.Action, true
			}
		}
		if !found {
			return nil, errors.New("traces: no top frame")
		}
	} else if err := json.Unmarshal(d["traces"], &top); err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	if top.Value == "" {
		top.Value = "0x0"
	}
	var receipts []struct {
		TransactionHash  string `json:"transactionHash"`
		TransactionIndex string `json:"transactionIndex"`
	}
	if err := json.Unmarshal(d["receipts"], &receipts); err != nil || len(receipts) != 1 {
		return nil, fmt.Errorf("receipts: %v (%d, want one)", err, len(receipts))
	}
	var block map[string]any
	if err := json.Unmarshal(d["block"], &block); err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	txs, _ := block["transactions"].([]any)
	found := false
	for i, h := range txs {
		if s, _ := h.(string); strings.EqualFold(s, receipts[0].TransactionHash) {
			txs[i] = map[string]any{"hash": s, "transactionIndex": receipts[0].TransactionIndex, "from": top.From, "to": top.To, "value": top.Value}
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("the block does not list %s", receipts[0].TransactionHash)
	}
	block["transactions"] = txs
	delete(d, "traces")
	b, err := json.Marshal(block)
	if err != nil {
		return nil, err
	}
	d["block"] = b
	return json.Marshal(d)
}
