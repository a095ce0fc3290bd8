package normalform

import "testing"

// TestRuleTable checks the table's shape: each of the 16 rules exactly
// once, with the one premise function of its operands' kind, node rules
// (and only they) with junctions, and parallel merges exactly R7 and R13.
func TestRuleTable(t *testing.T) {
	seen := map[Rule]int{}
	for i := range ruleTable {
		r := &ruleTable[i]
		seen[r.rule]++
		set := 0
		for _, f := range []bool{r.leaves != nil, r.attach != nil, r.chains != nil, r.one != nil} {
			if f {
				set++
			}
		}
		var want bool
		switch r.ops {
		case twoLeaves:
			want = r.leaves != nil
		case leafAndChain:
			want = r.attach != nil
		case twoChains:
			want = r.chains != nil
		case oneChain:
			want = r.one != nil
		}
		if set != 1 || !want {
			t.Errorf("%s: %d premise functions, the one of its operands' kind set: %v", r.rule, set, want)
		}
		if (r.stage == nodeStage) != (len(r.meets) > 0) {
			t.Errorf("%s: stage %d with %d junctions", r.rule, r.stage, len(r.meets))
		}
		if r.rule.String() != ruleNames[r.rule] || r.rule < R1 || r.rule > R16 {
			t.Errorf("entry %d: rule %v is not one of R1–R16", i, r.rule)
		}
	}
	for r := R1; r <= R16; r++ {
		if seen[r] != 1 {
			t.Errorf("%s: %d entries, want 1", r, seen[r])
		}
		if ruleSpecs[r] == nil || ruleSpecs[r].rule != r {
			t.Errorf("%s: not indexed", r)
		}
		if want := r == R7 || r == R13; r.Parallel() != want {
			t.Errorf("%s.Parallel() = %v", r, r.Parallel())
		}
	}
	for _, r := range []Rule{NoRule, Lift, Connect, Promote, Detect, Rule(200)} {
		if r.Parallel() {
			t.Errorf("%v.Parallel() = true", r)
		}
	}
	// The root tracker's partner lists, derived from the node rules'
	// junctions: what the hand-written lists were (R11 both ways, R12
	// append and prepend; R13 at the origin), within candidates' buffer.
	want := [2][]partnerList{
		{{1, leafFrom}, {0, leafTo}, {0, chainDest}, {1, chainOrig}},
		{{1, leafFrom}, {0, leafTo}, {0, chainOrig}},
	}
	for kind := range partnerLists {
		got := partnerLists[kind]
		if len(got) > maxPartnerLists || len(got) != len(want[kind]) {
			t.Fatalf("partner lists of kind %d: %v, want %v", kind, got, want[kind])
		}
		for _, w := range want[kind] {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("partner lists of kind %d: %v lacks %v", kind, got, w)
			}
		}
	}
	// The leaf stage's priority on two leaves, and the rules that reach
	// across closed chains (the package documentation states both).
	var order, across []Rule
	for _, r := range stageRules[leafStage][twoLeaves] {
		order = append(order, r.rule)
	}
	for _, r := range acrossRules {
		across = append(across, r.rule)
	}
	if got := ruleList(order); got != "R2 R3 R1 R4 R5" {
		t.Errorf("leaf rules on two leaves in order %s", got)
	}
	if got := ruleList(across); got != "R2 R3 R1" {
		t.Errorf("rules across closed chains %s", got)
	}
}

func ruleList(rs []Rule) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += " "
		}
		s += r.String()
	}
	return s
}
