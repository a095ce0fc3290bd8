package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform/show"
)

// jsonKind is a JSON value's type: null, bool, number, string, array or
// object.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// jsonLines reads JSON lines into objects, numbers kept as numbers.
func jsonLines(t *testing.T, what, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v in %s", what, err, out)
		}
		objs = append(objs, m)
	}
	return objs
}

// contractFields are the names of show.TxJSON, the fields every
// JSON output of a transaction shares.
func contractFields() []string {
	var names []string
	ty := reflect.TypeOf(show.TxJSON{})
	for i := 0; i < ty.NumField(); i++ {
		names = append(names, strings.Split(ty.Field(i).Tag.Get("json"), ",")[0])
	}
	return names
}

// TestJSONContract runs the same transactions through `query --format
// json`, `show --format json`, `inspect --format json` and `export
// --format jsonl`: each field has one name, one type and one value
// wherever it appears, numbers are numbers, balances are maps of decimal
// strings, reasons are arrays and unknown costs are null.
func TestJSONContract(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", idx, mainnetDir); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	byTx := func(what string, objs []map[string]any) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, o := range objs {
			tx, _ := o["tx"].(string)
			if tx == "" {
				t.Fatalf("%s: an object without tx: %v", what, o)
			}
			m[tx] = o
		}
		return m
	}
	run := func(what string, args ...string) map[string]map[string]any {
		out, errs, code := flowq(t, nil, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", what, code, errs)
		}
		return byTx(what, jsonLines(t, what, out))
	}
	outputs := map[string]map[string]map[string]any{
		"query":   run("query", "query", "--index", idx, "--format", "json", "find transactions"),
		"inspect": run("inspect", "inspect", "--format", "json", mainnetDir),
		"export":  run("export", "export", "--index", idx, "--format", "jsonl"),
	}
	if len(outputs["query"]) != 4 {
		t.Fatalf("query: %d transactions, want 4", len(outputs["query"]))
	}
	show := map[string]map[string]any{}
	for tx := range outputs["query"] {
		for k, v := range run("show "+tx, "query", "--index", idx, "--format", "json", "show "+tx) {
			show[k] = v
		}
	}
	outputs["show"] = show

	sawNull := false
	for tx, q := range outputs["query"] {
		// Every column of the query's row, and every field of the
		// contract, is in each output with the same type and value.
		names := contractFields()
		for k := range q {
			if k != "bot" {
				names = append(names, k)
			}
		}
		for _, name := range names {
			var first string
			var firstV any
			for _, out := range []string{"query", "show", "inspect", "export"} {
				o := outputs[out][tx]
				if o == nil {
					t.Fatalf("%s: no tx %s", out, tx)
				}
				v, ok := o[name]
				if !ok {
					if out == "query" {
						continue // the query's row has the columns it selects
					}
					t.Errorf("%s: tx %s has no field %q", out, tx, name)
					continue
				}
				if first == "" {
					first, firstV = out, v
					continue
				}
				if jsonKind(v) != jsonKind(firstV) || !reflect.DeepEqual(v, firstV) {
					t.Errorf("tx %s field %q: %s has %s %v, %s has %s %v", tx, name, first, jsonKind(firstV), firstV, out, jsonKind(v), v)
				}
			}
		}
		// The types the contract promises.
		want := map[string]string{"tx": "string", "block": "number", "verdict": "string", "reasons": "array",
			"gross": "object", "cycles": "number", "pools": "number", "hops": "number", "leftovers": "number", "costs_known": "bool", "hashes": "object"}
		e := outputs["export"][tx]
		for name, kind := range want {
			if got := jsonKind(e[name]); got != kind {
				t.Errorf("tx %s: %s is a %s, want a %s", tx, name, got, kind)
			}
		}
		for tok, amt := range e["gross"].(map[string]any) {
			if _, ok := amt.(string); !ok || !strings.HasPrefix(tok, "0x") {
				t.Errorf("tx %s: gross %q: %v is not a decimal string", tx, tok, amt)
			}
		}
		if e["costs_known"] == false {
			sawNull = true
			for _, out := range []string{"query", "show", "inspect", "export"} {
				if v, ok := outputs[out][tx]["net"]; !ok || v != nil {
					t.Errorf("%s: tx %s: costs unknown, net %v, want null", out, tx, v)
				}
			}
		} else if jsonKind(e["net"]) != "object" {
			t.Errorf("tx %s: costs known, net %v", tx, e["net"])
		}
	}
	if !sawNull {
		t.Error("no transaction with unknown costs: null is not tested")
	}
}
