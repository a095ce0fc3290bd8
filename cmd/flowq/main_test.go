package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// flowq runs the command in-process with the given environment.
func flowq(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code = run(args, strings.NewReader(stdin), &out, &errb, lookup)
	return out.String(), errb.String(), code
}

const triangular = "../../examples/mainnet/triangular_arb.json"
const curve = "../../examples/mainnet/curve_arb.json"

func TestInspectT0Text(t *testing.T) {
	out, errs, code := flowq(t, nil, "", "inspect", "--t0", triangular)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"tx 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc  block 11117996  index 12  (parity trace)",
		"costs unknown: the input has no receipt",
		"5 transfers from 22 frames (0 reverted) and 13 logs",
		"T0: 5 call nodes, 5 leaves",
		"├─ #0 0x05f7…b28e → 0x9c59…957e  1.208215735907924548 WETH  σ 0x7a25…488d  log 25",
		"   └─ #4 0xd3d2…3a17 → 0x05f7…b28e  1.217412699500042785 WETH  σ 0xd3d2…3a17  log 35",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "1 transactions decoded, 0 failed") {
		t.Errorf("summary missing: %s", errs)
	}
}

func TestInspectJSONAndStdin(t *testing.T) {
	data, err := os.ReadFile(curve)
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := flowq(t, nil, string(data), "inspect", "--t0", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		n++
		var v struct {
			Tx        string           `json:"tx"`
			Block     uint64           `json:"block"`
			Shape     string           `json:"shape"`
			Costs     string           `json:"costs"`
			Transfers []map[string]any `json:"transfers"`
			T0        map[string]any   `json:"t0"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v", n, err)
		}
		if v.Tx != "0xd369757f482fb8c62b86a136742c0ff11881ef0427a69be79f7d301bf9cf9a89" || v.Block != 11189945 || v.Shape != "parity" {
			t.Errorf("unexpected header %+v", v)
		}
		if len(v.Transfers) != 12 || v.T0["frame"] == nil {
			t.Errorf("want 12 transfers and a T0 root frame, got %d, %v", len(v.Transfers), v.T0)
		}
		if v.Transfers[0]["token"] != "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" || v.Transfers[0]["amount"] != "16047864749747701760" {
			t.Errorf("first transfer should be the native 16.0478… ETH, got %v", v.Transfers[0])
		}
		if !strings.HasPrefix(v.Costs, "unknown") {
			t.Errorf("costs must be reported unknown without a receipt, got %q", v.Costs)
		}
	}
	if n != 1 {
		t.Errorf("want 1 JSON line, got %d", n)
	}
}

// countTransfers runs inspect --format json and counts transfers.
func countTransfers(t *testing.T, env map[string]string, args ...string) int {
	t.Helper()
	out, errs, code := flowq(t, env, "", append([]string{"inspect", "--t0", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Transfers []any `json:"transfers"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil {
		t.Fatal(err)
	}
	return len(v.Transfers)
}

// curve_arb wraps and unwraps WETH: its Deposit and Withdrawal are
// transfers only while WETH is the configured wrapped native.
func TestWrappedNativeFlagAndEnv(t *testing.T) {
	def := countTransfers(t, nil, curve)
	if def != 12 {
		t.Fatalf("default: want 12 transfers, got %d", def)
	}
	if n := countTransfers(t, nil, curve, "--wrapped-native", ""); n != def-2 {
		t.Errorf("--wrapped-native '': want %d transfers, got %d", def-2, n)
	}
	if n := countTransfers(t, map[string]string{envWrapped: ""}, curve); n != def-2 {
		t.Errorf("%s='': want %d transfers, got %d", envWrapped, def-2, n)
	}
	if n := countTransfers(t, nil, curve, "--chain", "bsc"); n != def-2 {
		t.Errorf("--chain bsc (WBNB wrapped): want %d transfers, got %d", def-2, n)
	}
	if n := countTransfers(t, map[string]string{envChain: "bsc"}, curve, "--chain", "ethereum"); n != def {
		t.Errorf("the flag must win over %s: want %d, got %d", envChain, def, n)
	}
	weth := "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"
	if n := countTransfers(t, map[string]string{envChain: "bsc", envWrapped: weth}, curve); n != def {
		t.Errorf("%s must override the chain default: want %d, got %d", envWrapped, def, n)
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	bad := dir + "/bad.json"
	os.WriteFile(bad, []byte(`{"traces": [{"action": {"from": "0x12"`), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"truncated file", nil, []string{"inspect", triangular, bad}, 1, "1 transactions decoded, 1 failed"},
		{"missing file", nil, []string{"inspect", dir + "/nope.json"}, 2, "no such file"},
		{"unknown chain", nil, []string{"inspect", "--chain", "dogechain", triangular}, 2, "unknown chain \"dogechain\""},
		{"bad wrapped-native env", map[string]string{envWrapped: "0xzz"}, []string{"inspect", triangular}, 2, "FLOWQ_WRAPPED_NATIVE: \"0xzz\" is not a 20-byte hex address"},
		{"bad format", nil, []string{"inspect", "--format", "xml", triangular}, 2, "--format must be text or json"},
		{"no matching tx", nil, []string{"inspect", "--tx", "0x01", triangular}, 1, "no transaction matches --tx 0x01"},
		{"unknown command", nil, []string{"frobnicate"}, 2, "unknown command \"frobnicate\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := flowq(t, c.env, "", c.args...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errs, c.code, c.want)
			}
		})
	}
}

func TestInspectDirectoryAndFilter(t *testing.T) {
	out, errs, code := flowq(t, nil, "", "inspect", "../../examples/mainnet", "--tx", "0xDDBF97F758BD0958487E18D9E307CD1256B1AD6763CD34090F4C9720BA1B4ACC")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(out, "\ntx ")+strings.Count(out[:3], "tx ") != 1 || !strings.Contains(errs, "4 transactions decoded, 0 failed") {
		t.Errorf("want the 4 example transactions decoded and 1 shown:\n%s\n%s", out, errs)
	}
}

// The analysis of the mev-inspect-rs triangular arbitrage: one arbitrage
// cycle at the sender, +0.009196963592118237 WETH gross (the label's
// 9196963592118237 wei), costs unknown without a receipt.
func TestInspectAnalysis(t *testing.T) {
	out, errs, code := flowq(t, nil, "", "inspect", "--steps", triangular)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"verdict WARNING (probable)  reasons: costs_unknown",
		"gross at the principals: +0.009196963592118237 WETH",
		"net: unknown (no receipt: gas cannot be charged)",
		"arbitrage at 0x05f7…b28e  WETH→WETH  δ +0.009196963592118237 WETH  (5 transfers)",
		"R14      at frame 0:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n%s", want, out)
		}
	}
	out, errs, code = flowq(t, nil, "", "inspect", "--format", "json", triangular)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Tx      string   `json:"tx"`
		Verdict string   `json:"verdict"`
		Tier    string   `json:"tier"`
		Reasons []string `json:"reasons"`
		Cycles  int      `json:"cycles"`
		Closed  []struct {
			Label  string            `json:"label"`
			Origin string            `json:"origin"`
			Delta  map[string]string `json:"delta"`
		} `json:"cycle_chains"`
		Leftovers int `json:"leftovers"`
		Profit    struct {
			Gross map[string]string `json:"gross"`
			Net   map[string]string `json:"net"`
		} `json:"profit"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil {
		t.Fatal(err)
	}
	weth := "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
	if v.Verdict != "warning" || v.Tier != "probable" || v.Cycles != 1 || len(v.Closed) != 1 || v.Closed[0].Label != "arbitrage" ||
		v.Profit.Gross[weth] != "9196963592118237" || v.Profit.Net != nil || v.Leftovers != 0 {
		t.Errorf("unexpected analysis: %+v", v)
	}
}

// TestInspectBlock: the scenario block's three legs, given in any order
// and as separate files, are one block with one sandwich, in text and in
// JSON.
func TestInspectBlock(t *testing.T) {
	dir := "../../examples/scenarios/geth/"
	files := []string{dir + "sandwich_back.json", dir + "sandwich_victim.json", dir + "sandwich_front.json"}
	out, errs, code := flowq(t, nil, "", append([]string{"inspect", "--block"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"block 137  3 transactions  3 swaps  1 sandwiches  0 back-runs",
		"    1 0x24288a6af7232cbea20b60c1063c511337d994e1b348570b9ea3a8becc700a9d  0x6b8b…a372 → 0x6d9d…ff80  none  [sandwich_victim]",
		"sandwich 1 by bot 0x2724…4579 (sender 0x9e56…4441): gain +0.55269363547179709 WETH",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, errs, code = flowq(t, nil, "", append([]string{"inspect", "--block", "--format", "json"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Block      uint64 `json:"block"`
		Sandwiches []struct {
			Gain    string `json:"gain"`
			Victims []struct {
				Index int `json:"index"`
			} `json:"victims"`
		} `json:"sandwiches"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Block != 137 || len(r.Sandwiches) != 1 || r.Sandwiches[0].Gain != "552693635471797090" || len(r.Sandwiches[0].Victims) != 1 {
		t.Errorf("json %+v", r)
	}
}
