package normalform

import (
	"strings"
	"testing"
)

// TestRuleStoredValues holds the bytes rules are stored as: every rule has
// one, no two share one, each decodes back to its rule, and they are the
// values stored before the rules became a table (byte(rule) then), so no
// stored normal form or step log changes. A byte no rule is stored as is
// rejected by name.
func TestRuleStoredValues(t *testing.T) {
	// The stored values, by name: append, never edit.
	want := map[string]byte{
		"": 0, "R1": 1, "R2": 2, "R3": 3, "R4": 4, "R5": 5, "R6": 6, "R7": 7, "R8": 8,
		"R9": 9, "R10": 10, "R11": 11, "R12": 12, "R13": 13, "R14": 14, "R15": 15, "R16": 16,
		"lift": 17, "connect": 18, "promote": 19, "specular": 20, "complementary": 21, "detect": 22,
	}
	used := map[byte]Rule{}
	for r := NoRule; r <= Detect; r++ {
		b, ok := ruleStored[r]
		if !ok {
			t.Errorf("%q has no stored value", r)
			continue
		}
		if w, ok := want[r.String()]; !ok || w != b {
			t.Errorf("%q is stored as %d, want %d", r, b, w)
		}
		if o, dup := used[b]; dup {
			t.Errorf("%q and %q are both stored as %d", o, r, b)
		}
		used[b] = r
		if storedRule(r) != b {
			t.Errorf("storedRule(%q) = %d, want %d", r, storedRule(r), b)
		}
		d := &decoder{b: []byte{b}}
		if got := d.rule(); got != r || d.err != nil {
			t.Errorf("byte %d decodes to %q (%v), want %q", b, got, d.err, r)
		}
	}
	if len(ruleStored) != len(want) {
		t.Errorf("%d stored values, want %d", len(ruleStored), len(want))
	}
	for x := 0; x < 256; x++ {
		if _, ok := used[byte(x)]; ok {
			continue
		}
		d := &decoder{b: []byte{byte(x)}}
		d.rule()
		if d.err == nil || !strings.Contains(d.err.Error(), "unknown rule byte") {
			t.Errorf("byte %d: error %v, want an unknown rule byte", x, d.err)
		}
	}
}
