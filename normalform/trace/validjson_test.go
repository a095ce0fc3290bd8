package trace

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The decoder validates every byte it reads past (json.go): whatever it
// decodes or skips, an input that encoding/json.Valid rejects always gets
// an error. It may still reject valid JSON that is not a trace.

// validSnippets are JSON values, valid and not, each put where the decoder
// only skips (an unknown key of a bundle): the decoder must accept exactly
// those json.Valid accepts.
var validSnippets = []string{
	// valid
	`null`, `true`, `false`, `0`, `-0`, `-0.0e+5`, `1E9`, `12.5e-3`, `""`,
	`"\"\\\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00\uDEAD"`, "\"\xff\xfe\"", `[]`, `{}`, ` [ 1 , 2 ] `,
	`{"a":[{},[],null,true,false,"",0,{"b":{"c":[]}}]}`, "[\t\r\n1\n]",
	// invalid
	`[1,]`, `[,1]`, `{"a" 1}`, `{"a":1,}`, `{,}`, `{"a":1 "b":2}`, `[1 2]`, `["a":1]`,
	`[01]`, `[-01]`, `[1.]`, `[.5]`, `[1e]`, `[1e+]`, `[-]`, `[+1]`, `[0x1]`, `[NaN]`, `[1.5.3]`,
	"[\"\x01\"]", "[\"a\x1fb\"]", `["\q"]`, `["\u12g4"]`, `["\u00"]`, `["\x41"]`, `["\U0001F600"]`, `["\a"]`,
	`[tru]`, `[nul]`, `[True]`, `[1}`, `{"a":1]`, `[[1]`, `{"a":{}`, `{"a"}`, `{1:2}`, `{'a':1}`, `['a']`,
	"[\v1]", "[\f1]", "[\u00a01]", `}}}]]]@@@`, `@@@`, `[1]]`, `{"a":1}}`, `"abc`, `[`, `{`, `"\`,
}

// TestDecodeSkippedGrammar puts each snippet in a skipped field of a real
// bundle and in a skipped field of a go-ethereum tracer test's genesis.
func TestDecodeSkippedGrammar(t *testing.T) {
	bundle := badRead(t, badParityDir+"triangular_arb.data.json")
	tracer := badRead(t, badGethDir+"simple.json")
	gi := bytes.Index(tracer, []byte(`"genesis": {`)) + len(`"genesis": {`)
	for _, snip := range validSnippets {
		docs := map[string][]byte{
			"bundle":  append([]byte(`{"extra": `+snip+`, `), bundle[bytes.IndexByte(bundle, '{')+1:]...),
			"genesis": append(append(append([]byte{}, tracer[:gi]...), `"extra": `+snip+`, `...), tracer[gi:]...),
		}
		for where, doc := range docs {
			res := Decode(doc, Options{Source: "snippet.json"})
			valid := json.Valid(doc)
			if valid != (len(res.Errors) == 0) {
				t.Errorf("%s %q: json.Valid %v, decoder errors %v", where, snip, valid, res.Errors)
			}
			if !valid && len(res.Txs) != 0 {
				t.Errorf("%s %q: invalid JSON, yet %d transactions decoded", where, snip, len(res.Txs))
			}
		}
	}
}

// TestDecodeGarbageInGenesis is the half-accepted file of issue 22:
// bytes that make no JSON, in the "genesis" section of a go-ethereum
// tracer test, which the decoder does not decode. They used to pass (the
// skip checked bracket balance only): now the file fails, naming the path
// and offset, and no transaction is taken from it.
func TestDecodeGarbageInGenesis(t *testing.T) {
	orig := badRead(t, badGethDir+"delegatecall.json")
	at := bytes.Index(orig, []byte(`"genesis": {`)) + len(`"genesis": {`)
	insert := func(g string) []byte {
		data := append(append(append([]byte{}, orig[:at]...), g...), orig[at:]...)
		if json.Valid(data) {
			t.Fatalf("%q: the mutated file is valid JSON", g)
		}
		return data
	}
	// Balanced garbage, which a skip that counts brackets takes for JSON.
	res := Decode(insert(`"junk": {[]}@@@, `), Options{Source: "delegatecall.json"})
	if len(res.Errors) != 1 || len(res.Txs) != 0 {
		t.Fatalf("%d errors (%v) and %d transactions, want one error and none", len(res.Errors), res.Errors, len(res.Txs))
	}
	e := res.Errors[0]
	t.Logf("error text: %v", e)
	if want := at + len(`"junk": {`); e.Path != "$.genesis.junk" || e.Offset != want || e.Msg != "expected an object key, found an array" {
		t.Errorf("error %q at %s (byte %d), want an object key expected at $.genesis.junk (byte %d)", e.Msg, e.Path, e.Offset, want)
	}
	// Unbalanced: the object ends early, what follows is no trace.
	res = Decode(insert(`}}}]]]@@@`), Options{Source: "delegatecall.json"})
	if len(res.Errors) != 1 || len(res.Txs) != 0 {
		t.Fatalf("%d errors (%v) and %d transactions, want one error and none", len(res.Errors), res.Errors, len(res.Txs))
	}
	t.Logf("error text: %v", res.Errors[0])
	// Deeper, inside a string of the prestate's storage: a raw control byte.
	in := bytes.Index(orig, []byte(`"storage": {`))
	in += len(`"storage": {`)
	data := bytes.Clone(orig)
	for data[in] != '"' {
		in++
	}
	in += 3 // inside the first storage key
	data[in] = 0x07
	if json.Valid(data) {
		t.Fatal("the mutated file is valid JSON")
	}
	res = Decode(data, Options{Source: "delegatecall.json"})
	if len(res.Errors) != 1 || len(res.Txs) != 0 || res.Errors[0].Offset != in || !strings.Contains(res.Errors[0].Msg, "control character 0x07") {
		t.Fatalf("%d errors (%v) and %d transactions, want one error about the control byte at %d", len(res.Errors), res.Errors, len(res.Txs), in)
	}
	t.Logf("error text: %v", res.Errors[0])
}

// differentialInputs are every trace file of the repository's testdata
// and scenarios, and the fuzz corpus go test has grown for FuzzDecode on
// this machine (when there is one; its size is logged).
func differentialInputs(t *testing.T) [][]byte {
	var paths []string
	for _, g := range []string{"testdata/corpus/*/*/*.json", "testdata/*.json", "../../examples/scenarios/*/*.json"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	if len(paths) < 26 {
		t.Fatalf("only %d input files", len(paths))
	}
	var out [][]byte
	for _, p := range paths {
		out = append(out, badRead(t, p))
	}
	if cache, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		dir := filepath.Join(strings.TrimSpace(string(cache)), "fuzz/github.com/flowq/flowq/normalform/trace/FuzzDecode")
		ents, _ := os.ReadDir(dir)
		n := 0
		for _, e := range ents {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if v, ok := fuzzValue(raw); ok {
				out = append(out, v)
				n++
			}
		}
		t.Logf("%d input files, %d entries of the local fuzz cache", len(paths), n)
	}
	return out
}

// fuzzValue reads a "go test fuzz v1" file holding one []byte.
func fuzzValue(raw []byte) ([]byte, bool) {
	s := strings.TrimSpace(string(raw))
	s, ok := strings.CutPrefix(s, "go test fuzz v1\n[]byte(")
	if !ok || !strings.HasSuffix(s, ")") {
		return nil, false
	}
	v, err := strconv.Unquote(s[:len(s)-1])
	return []byte(v), err == nil
}

// TestDecodeNeverAcceptsInvalidJSON is the differential test: the inputs
// and many mutations of each (truncations, flipped bytes, garbage inserted
// at spread offsets) are decoded, and whenever json.Valid rejects one the
// decoder must report an error.
func TestDecodeNeverAcceptsInvalidJSON(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	garbage := []string{"}}}]]]@@@", "@", ",", ":", "]", "}", `"`, "\\", "\x00", "\x1f", "0", "-", ".", "e", "x", " ,,", `"a":`, "[", "{", "tru", "\xff"}
	checked, invalid := 0, 0
	check := func(name string, data []byte) {
		checked++
		res := Decode(data, Options{Source: "diff.json"})
		if json.Valid(data) {
			return
		}
		invalid++
		if len(res.Errors) == 0 {
			t.Errorf("%s: json.Valid rejects it, the decoder accepted it (%d transactions)", name, len(res.Txs))
		}
	}
	for n, orig := range differentialInputs(t) {
		check(strconv.Itoa(n), orig)
		if len(orig) < 2 {
			continue
		}
		// Spread offsets: more for small inputs, at least 24 per input.
		step := max(len(orig)/24, 1)
		for off := r.Intn(step); off < len(orig); off += step {
			check(strconv.Itoa(n)+"/cut", orig[:off:off])
			flip := bytes.Clone(orig)
			flip[off] ^= byte(1 << r.Intn(8))
			check(strconv.Itoa(n)+"/flip", flip)
			g := garbage[r.Intn(len(garbage))]
			ins := append(append(append(make([]byte, 0, len(orig)+len(g)), orig[:off]...), g...), orig[off:]...)
			check(strconv.Itoa(n)+"/insert "+strconv.Quote(g), ins)
		}
	}
	t.Logf("%d inputs checked, %d of them invalid JSON", checked, invalid)
	if invalid < checked/3 {
		t.Errorf("only %d of %d mutated inputs are invalid JSON: the mutations test little", invalid, checked)
	}
}

// FuzzDecodeValid: the decoder never accepts what json.Valid rejects.
//
//	go test ./normalform/trace/ -run '^$' -fuzz FuzzDecodeValid -fuzztime 60s
func FuzzDecodeValid(f *testing.F) {
	files, _ := filepath.Glob("testdata/corpus/*/*/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 16<<10 {
			f.Add(data)
		}
	}
	for _, s := range validSnippets {
		f.Add([]byte(`{"traces":[],"logs":[],"extra":` + s + `}`))
		f.Add([]byte(`{"genesis":{"a":` + s + `},"context":{"number":"1"},"result":{"type":"CALL","from":"0x00000000000000000000000000000000000000aa","to":"0x00000000000000000000000000000000000000bb","value":"0x0"}}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := Decode(data, Options{Source: "fuzz"})
		if len(res.Errors) == 0 && !json.Valid(data) {
			t.Fatalf("json.Valid rejects the input, the decoder accepted it with %d transactions", len(res.Txs))
		}
	})
}

// TestRawStringUnescapes: a decoded string with escapes reads as
// encoding/json reads it (surrogate pairs joined, a lone surrogate
// U+FFFD, invalid UTF-8 passed through), and one that json.Valid rejects
// fails.
func TestRawStringUnescapes(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"tr\u0061ces"`, `"\"\\\/\b\f\n\r\t"`, `"\ud83d\ude00!"`, `"\ud83d"`, `"\ude00x"`,
		`"\ud83d\u0041"`, `"a\u00e9b"`, "\"\xff\xfe\"", `"0x\u0030\u0031"`, `"tail\\"`,
		`"\q"`, `"\u12"`, `"\u12g4"`, "\"a\x01\"", `"abc`, `"\`, `"\u`,
	} {
		var want string
		werr := json.Unmarshal([]byte(in), &want)
		s := newScanner([]byte(in), 0)
		got := s.rawString()
		if werr != nil {
			if s.err == nil {
				t.Errorf("%q: encoding/json rejects it (%v), the scanner read %q", in, werr, got)
			}
			continue
		}
		// encoding/json turns invalid UTF-8 into U+FFFD; the scanner,
		// like json.Valid, passes raw bytes through unchecked.
		rawNonASCII := strings.ContainsFunc(in, func(r rune) bool { return r >= 0x80 })
		if s.err != nil || (string(got) != want && !rawNonASCII) {
			t.Errorf("%q: got %q (%v), want %q", in, got, s.err, want)
		}
	}
}
