package ingest_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// Rows with cryo's schemas: column names and Parquet types as cryo writes
// them (crates/freeze/src/datasets/logs.rs, transactions.rs, blocks.rs;
// U256 columns with the _binary, _string and _f64 suffixes of
// --u256-types). Go's uint32 and uint64 are Parquet's INT(32/64, unsigned),
// cryo's u32 and u64.
type cryoLogRow struct {
	BlockNumber      uint32 `parquet:"block_number"`
	TransactionIndex uint32 `parquet:"transaction_index"`
	LogIndex         uint32 `parquet:"log_index"`
	TransactionHash  []byte `parquet:"transaction_hash"`
	Address          []byte `parquet:"address"`
	Topic0           []byte `parquet:"topic0,optional"`
	Topic1           []byte `parquet:"topic1,optional"`
	Topic2           []byte `parquet:"topic2,optional"`
	Topic3           []byte `parquet:"topic3,optional"`
	Data             []byte `parquet:"data"`
	ChainID          uint64 `parquet:"chain_id"`
}

type cryoTxRow struct {
	BlockNumber      *uint64 `parquet:"block_number,optional"`
	TransactionIndex *uint64 `parquet:"transaction_index,optional"`
	TransactionHash  []byte  `parquet:"transaction_hash"`
	Nonce            uint64  `parquet:"nonce"`
	FromAddress      []byte  `parquet:"from_address"`
	ToAddress        []byte  `parquet:"to_address,optional"`
	ValueBinary      []byte  `parquet:"value_binary"`
	ValueString      string  `parquet:"value_string"`
	ValueF64         float64 `parquet:"value_f64"`
	Input            []byte  `parquet:"input"`
	GasLimit         uint64  `parquet:"gas_limit"`
	GasUsed          *uint64 `parquet:"gas_used,optional"`
	GasPrice         *uint64 `parquet:"gas_price,optional"`
	TransactionType  *uint32 `parquet:"transaction_type,optional"`
	Success          bool    `parquet:"success"`
	ChainID          uint64  `parquet:"chain_id"`
}

type cryoTxRowNoReceipt struct {
	BlockNumber      *uint64 `parquet:"block_number,optional"`
	TransactionIndex *uint64 `parquet:"transaction_index,optional"`
	TransactionHash  []byte  `parquet:"transaction_hash"`
	Nonce            uint64  `parquet:"nonce"`
	FromAddress      []byte  `parquet:"from_address"`
	ToAddress        []byte  `parquet:"to_address,optional"`
	ValueString      string  `parquet:"value_string"`
	Input            []byte  `parquet:"input"`
	GasLimit         uint64  `parquet:"gas_limit"`
	ChainID          uint64  `parquet:"chain_id"`
}

type cryoBlockRow struct {
	BlockHash     []byte  `parquet:"block_hash,optional"`
	Author        []byte  `parquet:"author,optional"`
	BlockNumber   *uint32 `parquet:"block_number,optional"`
	GasUsed       uint64  `parquet:"gas_used"`
	ExtraData     []byte  `parquet:"extra_data"`
	Timestamp     uint32  `parquet:"timestamp"`
	BaseFeePerGas *uint64 `parquet:"base_fee_per_gas,optional"`
	ChainID       uint64  `parquet:"chain_id"`
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return b
}

func qnum(t testing.TB, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func writeParquet[T any](t testing.TB, path string, rows []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

type jlog struct {
	Address          string   `json:"address"`
	Topics           []string `json:"topics"`
	Data             string   `json:"data"`
	LogIndex         string   `json:"logIndex"`
	TransactionIndex string   `json:"transactionIndex"`
	TransactionHash  string   `json:"transactionHash"`
	BlockNumber      string   `json:"blockNumber"`
}

// cryoCase is one transaction of the repository's data, as cryo would
// have extracted it, and as the JSON bundle `fetch --mode receipts` saves.
type cryoCase struct {
	name     string
	block    uint64
	blockObj map[string]any // the header, transactions as full objects
	receipt  map[string]any // nil: logs only
	logs     []jlog
	from, to string
	value    *big.Int
	ptraces  []map[string]any // Parity frames (trace_transaction), for the traces dataset
	raw      []byte           // the bundle as the repository has it
}

// fromScenario reads a scenario bundle (block, receipts, geth trace).
func fromScenario(t *testing.T, path string) cryoCase {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Block    map[string]any   `json:"block"`
		Receipts []map[string]any `json:"receipts"`
		Traces   map[string]any   `json:"traces"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Receipts) != 1 {
		t.Fatalf("%s: %d receipts", path, len(d.Receipts))
	}
	c := cryoCase{name: strings.TrimSuffix(filepath.Base(path), ".json"), receipt: d.Receipts[0], blockObj: d.Block}
	c.block = qnum(t, d.Block["number"].(string))
	c.from = d.Traces["from"].(string)
	if to, ok := d.Traces["to"].(string); ok {
		c.to = to
	}
	v, _ := d.Traces["value"].(string)
	c.value = new(big.Int)
	if v != "" {
		c.value.SetString(strings.TrimPrefix(v, "0x"), 16)
	}
	lb, _ := json.Marshal(c.receipt["logs"])
	if err := json.Unmarshal(lb, &c.logs); err != nil {
		t.Fatal(err)
	}
	return c
}

// fromMainnet reads a mainnet example (a Parity trace and its logs, no
// receipt and no block): cryo's transactions without gas_used.
func fromMainnet(t *testing.T, path string) cryoCase {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Traces []struct {
			Action struct {
				From, To, Value string
			} `json:"action"`
			TransactionHash     string `json:"transactionHash"`
			TransactionPosition int    `json:"transactionPosition"`
			BlockNumber         uint64 `json:"blockNumber"`
		} `json:"traces"`
		Logs []jlog `json:"logs"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var pt struct {
		Traces []map[string]any `json:"traces"`
	}
	if err := json.Unmarshal(raw, &pt); err != nil {
		t.Fatal(err)
	}
	top := d.Traces[0]
	c := cryoCase{ptraces: pt.Traces, raw: raw, name: strings.TrimSuffix(filepath.Base(path), ".json"), block: top.BlockNumber, logs: d.Logs, from: top.Action.From, to: top.Action.To}
	c.value, _ = new(big.Int).SetString(strings.TrimPrefix(top.Action.Value, "0x"), 16)
	c.blockObj = map[string]any{"number": "0x" + strconv.FormatUint(c.block, 16), "transactions": []any{top.TransactionHash}}
	for i := range c.logs {
		c.logs[i].TransactionIndex = "0x" + strconv.FormatInt(int64(top.TransactionPosition), 16)
	}
	return c
}

// fromParity reads a Parity scenario bundle (block, receipts, trace_transaction's frames).
func fromParity(t *testing.T, path string) cryoCase {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Block    map[string]any   `json:"block"`
		Receipts []map[string]any `json:"receipts"`
		Traces   []map[string]any `json:"traces"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	c := cryoCase{name: strings.TrimSuffix(filepath.Base(path), ".json"), receipt: d.Receipts[0], blockObj: d.Block, ptraces: d.Traces, raw: raw}
	c.block = qnum(t, d.Block["number"].(string))
	top := d.Traces[0]["action"].(map[string]any)
	c.from = top["from"].(string)
	if to, ok := top["to"].(string); ok {
		c.to = to
	}
	c.value = new(big.Int)
	if v, ok := top["value"].(string); ok {
		c.value.SetString(strings.TrimPrefix(v, "0x"), 16)
	}
	lb, _ := json.Marshal(c.receipt["logs"])
	if err := json.Unmarshal(lb, &c.logs); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *cryoCase) hash() string {
	if c.receipt != nil {
		return c.receipt["transactionHash"].(string)
	}
	return c.logs[0].TransactionHash
}

func (c *cryoCase) index(t testing.TB) uint64 {
	if c.receipt != nil {
		return qnum(t, c.receipt["transactionIndex"].(string))
	}
	return qnum(t, c.logs[0].TransactionIndex)
}

// jsonBundle is what `flowq fetch --mode receipts` saves for the case:
// the block with its transaction as a full object, and the receipt (or,
// without one, the transaction's logs: the eth_getLogs fallback).
func (c *cryoCase) jsonBundle(t testing.TB) []byte {
	blk := map[string]any{}
	for k, v := range c.blockObj {
		blk[k] = v
	}
	txs, _ := blk["transactions"].([]any)
	out := make([]any, len(txs))
	for i, h := range txs {
		out[i] = h
		if s, _ := h.(string); strings.EqualFold(s, c.hash()) {
			o := map[string]any{"hash": s, "transactionIndex": "0x" + strconv.FormatUint(c.index(t), 16), "from": c.from, "to": nil, "value": "0x" + c.value.Text(16)}
			if c.to != "" {
				o["to"] = c.to
			}
			out[i] = o
		}
	}
	blk["transactions"] = out
	b := map[string]any{"block": blk}
	if c.receipt != nil {
		b["receipts"] = []any{c.receipt}
	} else {
		b["logs"] = c.logs
	}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// writeCryo writes the case as cryo's three files in dir, for the range
// lo..hi, and returns their paths (logs, transactions, blocks).
func (c *cryoCase) writeCryo(t testing.TB, dir string, lo, hi uint64) (string, string, string) {
	name := func(ds string) string {
		return filepath.Join(dir, fmt.Sprintf("ethereum__%s__%011d_to_%011d.parquet", ds, lo, hi))
	}
	var logs []cryoLogRow
	ti := uint32(c.index(t))
	for _, l := range c.logs {
		r := cryoLogRow{BlockNumber: uint32(c.block), TransactionIndex: ti, LogIndex: uint32(qnum(t, l.LogIndex)),
			TransactionHash: unhex(t, c.hash()), Address: unhex(t, l.Address), Data: unhex(t, l.Data), ChainID: 1}
		tp := []*[]byte{&r.Topic0, &r.Topic1, &r.Topic2, &r.Topic3}
		for i, h := range l.Topics {
			*tp[i] = unhex(t, h)
		}
		logs = append(logs, r)
	}
	writeParquet(t, name("logs"), logs)

	bn, idx := c.block, c.index(t)
	val := c.value.FillBytes(make([]byte, 32))
	f, _ := new(big.Float).SetInt(c.value).Float64()
	var to []byte
	if c.to != "" {
		to = unhex(t, c.to)
	}
	if c.receipt != nil {
		row := cryoTxRow{BlockNumber: &bn, TransactionIndex: &idx, TransactionHash: unhex(t, c.hash()), FromAddress: unhex(t, c.from),
			ToAddress: to, ValueBinary: val, ValueString: c.value.String(), ValueF64: f, ChainID: 1}
		gu := qnum(t, c.receipt["gasUsed"].(string))
		row.GasUsed = &gu
		if p, ok := c.receipt["effectiveGasPrice"].(string); ok {
			gp := qnum(t, p)
			row.GasPrice = &gp
		}
		if ty, ok := c.receipt["type"].(string); ok {
			x := uint32(qnum(t, ty))
			row.TransactionType = &x
		}
		row.Success = c.receipt["status"] == "0x1"
		writeParquet(t, name("transactions"), []cryoTxRow{row})
	} else {
		writeParquet(t, name("transactions"), []cryoTxRowNoReceipt{{BlockNumber: &bn, TransactionIndex: &idx, TransactionHash: unhex(t, c.hash()),
			FromAddress: unhex(t, c.from), ToAddress: to, ValueString: c.value.String(), ChainID: 1}})
	}

	b32 := uint32(c.block)
	brow := cryoBlockRow{BlockNumber: &b32, ChainID: 1}
	if h, ok := c.blockObj["hash"].(string); ok {
		brow.BlockHash = unhex(t, h)
	}
	if m, ok := c.blockObj["miner"].(string); ok {
		brow.Author = unhex(t, m)
	}
	if ts, ok := c.blockObj["timestamp"].(string); ok {
		brow.Timestamp = uint32(qnum(t, ts))
	}
	if bf, ok := c.blockObj["baseFeePerGas"].(string); ok {
		x := qnum(t, bf)
		brow.BaseFeePerGas = &x
	}
	writeParquet(t, name("blocks"), []cryoBlockRow{brow})
	return name("logs"), name("transactions"), name("blocks")
}

func cryoCases(t *testing.T) []cryoCase {
	files, err := filepath.Glob("../../examples/scenarios/geth/*.json")
	if err != nil || len(files) < 35 {
		t.Fatalf("expected the scenario bundles, found %d (%v)", len(files), err)
	}
	var cs []cryoCase
	for _, f := range files {
		cs = append(cs, fromScenario(t, f))
	}
	for _, f := range []string{"triangular_arb", "curve_arb", "dydx_loan"} {
		cs = append(cs, fromMainnet(t, filepath.Join("../../examples/mainnet", f+".json")))
	}
	return cs
}

func records(t *testing.T, ix *index.Index) map[normalform.Hash]*index.Record {
	out := map[normalform.Hash]*index.Record{}
	err := ix.Scan(context.Background(), func(r *index.Record) error {
		c := *r
		c.Latency = 0
		out[r.Hash] = &c
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCryoIngest writes every scenario bundle and the three mainnet
// examples (block 11017338's triangular arbitrage among them) as cryo's
// logs, transactions and blocks datasets, one range per case, ingests the
// directory, and checks that the index equals the one made from the
// same transactions' JSON bundles in receipts mode (verdict, tier, path,
// mode, reasons, gross, net, costs, hashes, normal form, every field but
// the latency). A second ingest skips every range (idempotence).
func TestCryoIngest(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	cdir, jdir := filepath.Join(root, "cryo"), filepath.Join(root, "json")
	cases := cryoCases(t)
	for i, c := range cases {
		d := filepath.Join(cdir, fmt.Sprintf("%02d_%s", i, c.name))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(jdir, 0o755); err != nil {
			t.Fatal(err)
		}
		lo := c.block / 1000 * 1000
		c.writeCryo(t, d, lo, lo+999)
		if err := os.WriteFile(filepath.Join(jdir, fmt.Sprintf("%02d_%s.json", i, c.name)), c.jsonBundle(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func(name string) *index.Index {
		ix, err := index.Open(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		return ix
	}
	ingestDir := func(ix *index.Index, dir string) ingest.Summary {
		ins, err := ingest.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ins) != len(cases) {
			t.Fatalf("%s: %d inputs, want %d", dir, len(ins), len(cases))
		}
		var fails []string
		sum, err := ingest.Ingest(ctx, ix, ins, ingest.Options{OnFailure: func(f index.Failure) { fails = append(fails, f.String()) }})
		if err != nil {
			t.Fatal(err)
		}
		if len(fails) > 0 {
			t.Fatalf("%s: failures:\n%s", dir, strings.Join(fails, "\n"))
		}
		return sum
	}
	cix, jix := open("cryo.idx"), open("json.idx")
	ingestDir(cix, cdir)
	ingestDir(jix, jdir)
	cr, jr := records(t, cix), records(t, jix)
	if len(cr) != len(cases) || len(jr) != len(cases) {
		t.Fatalf("cryo %d records, json %d, want %d", len(cr), len(jr), len(cases))
	}
	arbs := 0
	for h, want := range jr {
		got := cr[h]
		if got == nil {
			t.Errorf("%s: not in the cryo index", h.Hex())
			continue
		}
		if got.Mode != normalform.ModeReceipts {
			t.Errorf("%s: mode %s, want receipts", h.Hex(), got.Mode)
		}
		if got.Verdict == normalform.VerdictArbitrage {
			arbs++
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: cryo record differs from the JSON bundle's:\n cryo %+v\n json %+v", h.Hex(), *got, *want)
		}
	}
	if arbs < 10 {
		t.Errorf("%d arbitrages from cryo's datasets, want the scenarios' (at least 10)", arbs)
	}
	sum := ingestDir(cix, cdir)
	if sum.InputsSkipped != len(cases) || sum.Stored != 0 {
		t.Errorf("second ingest: %+v, want every range skipped", sum)
	}
}

// TestCryoBadInput: a range without its blocks file, datasets cut into
// different block ranges, and a corrupt logs file each fail with an
// error naming the file; the corrupt file is a recorded failure of its
// range, and --retry-failed reads the range again once it is repaired.
func TestCryoBadInput(t *testing.T) {
	ctx := context.Background()
	cs := cryoCases(t)
	c := cs[len(cs)-3] // triangular_arb, block 11117996
	if c.name != "triangular_arb" {
		t.Fatalf("case %s", c.name)
	}
	lo := c.block / 1000 * 1000
	rng := func(hi uint64) string { return fmt.Sprintf("%011d_to_%011d", lo, hi) }

	dir := t.TempDir()
	_, _, blocks := c.writeCryo(t, dir, lo, lo+999)
	os.Remove(blocks)
	_, err := ingest.Files(dir)
	if err == nil || !strings.Contains(err.Error(), "ethereum__logs__"+rng(lo+999)+".parquet") || !strings.Contains(err.Error(), "no blocks dataset for the same block range") {
		t.Errorf("missing blocks dataset: %v", err)
	}

	dir = t.TempDir()
	c.writeCryo(t, dir, lo, lo+999)
	other := t.TempDir()
	_, txs, _ := c.writeCryo(t, other, lo, lo+499)
	os.Remove(filepath.Join(dir, "ethereum__transactions__"+rng(lo+999)+".parquet"))
	os.Rename(txs, filepath.Join(dir, filepath.Base(txs)))
	_, err = ingest.Files(dir)
	if err == nil || !strings.Contains(err.Error(), rng(lo+499)) || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("mismatched ranges: %v", err)
	}

	dir = t.TempDir()
	logs, _, _ := c.writeCryo(t, dir, lo, lo+999)
	good, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logs, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ins, err := ingest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	var fails []index.Failure
	if _, err := ingest.Ingest(ctx, ix, ins, ingest.Options{OnFailure: func(f index.Failure) { fails = append(fails, f) }}); err != nil {
		t.Fatal(err)
	}
	if len(fails) != 1 || !strings.Contains(fails[0].Msg, logs) || !strings.Contains(fails[0].Msg, "Parquet") || !ingest.IsCryoName(fails[0].Source) {
		t.Fatalf("corrupt logs file: failures %+v", fails)
	}
	if err := os.WriteFile(logs, good, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := ingest.RetryFailed(ctx, ix, ingest.Options{}, nil)
	if err != nil || sum.Stored != 1 || sum.Failed != 0 {
		t.Fatalf("retry after repair: %+v %v", sum, err)
	}
	n := 0
	ix.Failures(ctx, func(index.Failure) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d failures left after the retry", n)
	}
}

// cryoTraceRow is a row of cryo's traces dataset (traces.rs; the action
// value a U256 with --u256-types' suffixes).
type cryoTraceRow struct {
	ActionFrom        []byte  `parquet:"action_from,optional"`
	ActionTo          []byte  `parquet:"action_to,optional"`
	ActionValueBinary []byte  `parquet:"action_value_binary"`
	ActionValueString string  `parquet:"action_value_string"`
	ActionValueF64    float64 `parquet:"action_value_f64"`
	ActionGas         *uint32 `parquet:"action_gas,optional"`
	ActionInput       []byte  `parquet:"action_input,optional"`
	ActionCallType    *string `parquet:"action_call_type,optional"`
	ActionInit        []byte  `parquet:"action_init,optional"`
	ActionRewardType  *string `parquet:"action_reward_type,optional"`
	ActionType        string  `parquet:"action_type"`
	ResultGasUsed     *uint32 `parquet:"result_gas_used,optional"`
	ResultOutput      []byte  `parquet:"result_output,optional"`
	ResultCode        []byte  `parquet:"result_code,optional"`
	ResultAddress     []byte  `parquet:"result_address,optional"`
	TraceAddress      string  `parquet:"trace_address"`
	Subtraces         uint32  `parquet:"subtraces"`
	TransactionIndex  *uint32 `parquet:"transaction_index,optional"`
	TransactionHash   []byte  `parquet:"transaction_hash,optional"`
	BlockNumber       uint32  `parquet:"block_number"`
	BlockHash         []byte  `parquet:"block_hash"`
	Error             *string `parquet:"error,optional"`
	ChainID           uint64  `parquet:"chain_id"`
}

// writeCryoTraces writes the case's Parity frames as cryo's traces
// dataset does: every failed frame and the frames below it left out
// (cryo's filter_failed_traces), the trace address joined by "_", call
// types as cryo names them ("delegate_call").
func (c *cryoCase) writeCryoTraces(t testing.TB, dir string, lo, hi uint64) string {
	type pf struct {
		Type   string `json:"type"`
		Action struct {
			From, To, Value, Input, Init, CallType, Address, RefundAddress, Balance string
		} `json:"action"`
		Result *struct {
			Output, Address string
		} `json:"result"`
		Error        string `json:"error"`
		TraceAddress []int  `json:"traceAddress"`
		Subtraces    uint32 `json:"subtraces"`
	}
	raw, _ := json.Marshal(c.ptraces)
	var fs []pf
	if err := json.Unmarshal(raw, &fs); err != nil {
		t.Fatal(err)
	}
	var rows []cryoTraceRow
	var failed []int
	for _, f := range fs {
		if len(f.TraceAddress) == 0 {
			failed = nil
		}
		if failed != nil && len(f.TraceAddress) >= len(failed) && reflect.DeepEqual(f.TraceAddress[:len(failed)], failed) {
			continue
		}
		failed = nil
		if f.Error != "" {
			failed = f.TraceAddress
			continue
		}
		ta := strings.Trim(strings.ReplaceAll(fmt.Sprint(f.TraceAddress), " ", "_"), "[]")
		idx := uint32(c.index(t))
		r := cryoTraceRow{ActionType: f.Type, TraceAddress: ta, Subtraces: f.Subtraces, TransactionIndex: &idx,
			TransactionHash: unhex(t, c.hash()), BlockNumber: uint32(c.block), BlockHash: make([]byte, 32), ChainID: 1}
		val := f.Action.Value
		switch f.Type {
		case "call":
			ct := map[string]string{"call": "call", "delegatecall": "delegate_call", "staticcall": "static_call", "callcode": "call_code"}[f.Action.CallType]
			r.ActionCallType = &ct
			r.ActionFrom, r.ActionTo, r.ActionInput = unhex(t, f.Action.From), unhex(t, f.Action.To), unhex(t, f.Action.Input)
			if f.Result != nil {
				r.ResultOutput = unhex(t, f.Result.Output)
			}
		case "create":
			r.ActionFrom, r.ActionInit = unhex(t, f.Action.From), unhex(t, f.Action.Init)
			if f.Result != nil && f.Result.Address != "" {
				r.ResultAddress = unhex(t, f.Result.Address)
			}
		case "suicide":
			r.ActionFrom, r.ActionTo, val = unhex(t, f.Action.Address), unhex(t, f.Action.RefundAddress), f.Action.Balance
		default:
			t.Fatalf("%s: frame type %q", c.name, f.Type)
		}
		v := new(big.Int)
		if val != "" {
			v.SetString(strings.TrimPrefix(val, "0x"), 16)
		}
		r.ActionValueBinary, r.ActionValueString = v.FillBytes(make([]byte, 32)), v.String()
		r.ActionValueF64, _ = new(big.Float).SetInt(v).Float64()
		rows = append(rows, r)
	}
	p := filepath.Join(dir, fmt.Sprintf("ethereum__traces__%011d_to_%011d.parquet", lo, hi))
	writeParquet(t, p, rows)
	return p
}

// TestCryoTraces writes every Parity scenario bundle and the three
// mainnet examples (Parity traces) as cryo's logs, transactions, blocks
// and traces datasets, the traces as cryo keeps them (failed frames and
// their subtrees dropped), ingests the directory, and checks each
// record against the traced record of the same bundle ingested as JSON:
// mode traces, and the same verdict, tier, path, reasons, gross, net,
// costs and normal-form hashes.
func TestCryoTraces(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	cdir, jdir := filepath.Join(root, "cryo"), filepath.Join(root, "json")
	files, err := filepath.Glob("../../examples/scenarios/parity/*.json")
	if err != nil || len(files) < 35 {
		t.Fatalf("expected the Parity scenario bundles, found %d (%v)", len(files), err)
	}
	var cases []cryoCase
	for _, f := range files {
		cases = append(cases, fromParity(t, f))
	}
	for _, f := range []string{"triangular_arb", "curve_arb", "dydx_loan"} {
		cases = append(cases, fromMainnet(t, filepath.Join("../../examples/mainnet", f+".json")))
	}
	// A failed call (with a call below it) before the first call of one
	// arbitrage: cryo leaves both out, so the frames after them are
	// renumbered.
	failedFirst := false
	for i := range cases {
		if cases[i].name == "two_pool_arb" {
			cases[i] = withFailedFirstCall(t, cases[i])
			failedFirst = true
		}
	}
	if !failedFirst {
		t.Fatal("no two_pool_arb scenario")
	}
	os.MkdirAll(jdir, 0o755)
	for i, c := range cases {
		d := filepath.Join(cdir, fmt.Sprintf("%02d_%s", i, c.name))
		os.MkdirAll(d, 0o755)
		lo := c.block / 1000 * 1000
		c.writeCryo(t, d, lo, lo+999)
		c.writeCryoTraces(t, d, lo, lo+999)
		if err := os.WriteFile(filepath.Join(jdir, fmt.Sprintf("%02d_%s.json", i, c.name)), c.raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name, dir string) map[normalform.Hash]*index.Record {
		ix, err := index.Open(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		ins, err := ingest.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		var fails []string
		if _, err := ingest.Ingest(ctx, ix, ins, ingest.Options{OnFailure: func(f index.Failure) { fails = append(fails, f.String()) }}); err != nil {
			t.Fatal(err)
		}
		if len(fails) > 0 {
			t.Fatalf("%s: failures:\n%s", dir, strings.Join(fails, "\n"))
		}
		return records(t, ix)
	}
	cr, jr := get("cryo.idx", cdir), get("json.idx", jdir)
	if len(cr) != len(cases) || len(jr) != len(cases) {
		t.Fatalf("cryo %d records, json %d, want %d", len(cr), len(jr), len(cases))
	}
	arbs := 0
	for h, want := range jr {
		got := cr[h]
		if got == nil {
			t.Errorf("%s: not in the cryo index", h.Hex())
			continue
		}
		if got.Mode != normalform.ModeTraces {
			t.Errorf("%s: mode %s, want traces", h.Hex(), got.Mode)
		}
		if got.Verdict == normalform.VerdictArbitrage {
			arbs++
		}
		type key struct {
			V    normalform.Verdict
			T    normalform.Tier
			P    normalform.Path
			R    string
			G, N string
			K    bool
			C    string
			H    normalform.Hashes
		}
		k := func(r *index.Record) key {
			return key{r.Verdict, r.Tier, r.Path, fmt.Sprint(r.Reasons), fmt.Sprint(r.Gross), fmt.Sprint(r.Net), r.CostsKnown, r.Costs.Dec(), r.Hashes}
		}
		if k(got) != k(want) {
			t.Errorf("%s: cryo record differs from the JSON bundle's:\n cryo %+v\n json %+v", h.Hex(), k(got), k(want))
		}
	}
	if arbs < 10 {
		t.Errorf("%d arbitrages from cryo's traces, want the scenarios' (at least 10)", arbs)
	}
}

// withFailedFirstCall inserts a reverted call [0] from the top frame's
// recipient, with a call [0 0] below it moving 1 ETH, before the
// transaction's other calls (their trace addresses shifted by one).
func withFailedFirstCall(t *testing.T, c cryoCase) cryoCase {
	var d map[string]any
	if err := json.Unmarshal(c.raw, &d); err != nil {
		t.Fatal(err)
	}
	frames := d["traces"].([]any)
	top := frames[0].(map[string]any)
	var out []any
	for i, f := range frames {
		m := f.(map[string]any)
		ta := m["traceAddress"].([]any)
		if len(ta) > 0 {
			ta[0] = ta[0].(float64) + 1
		}
		out = append(out, m)
		if i == 0 {
			m["subtraces"] = m["subtraces"].(float64) + 1
			bot := top["action"].(map[string]any)["to"].(string)
			mk := func(addr []any, to string, sub int) map[string]any {
				return map[string]any{"type": "call", "action": map[string]any{"callType": "call", "from": bot, "to": to, "value": "0xde0b6b3a7640000", "input": "0x", "gas": "0x0"},
					"error": "Reverted", "traceAddress": addr, "subtraces": sub, "transactionHash": top["transactionHash"],
					"transactionPosition": top["transactionPosition"], "blockNumber": top["blockNumber"], "blockHash": top["blockHash"]}
			}
			out = append(out, mk([]any{0.0}, "0x00000000000000000000000000000000000000aa", 1), mk([]any{0.0, 0.0}, "0x00000000000000000000000000000000000000bb", 0))
		}
	}
	d["traces"] = out
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	c.raw = raw
	raw2, _ := json.Marshal(out)
	c.ptraces = nil
	if err := json.Unmarshal(raw2, &c.ptraces); err != nil {
		t.Fatal(err)
	}
	return c
}
