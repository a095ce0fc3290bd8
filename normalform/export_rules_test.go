package normalform

import (
	"fmt"
	"slices"
)

// Junction names a junction of a node rule in ruleTable: the rule and the
// index of the meet in its entry.
type Junction struct {
	Rule Rule
	Meet int
}

// NodeJunctions lists every junction of the node rules, in table order.
func NodeJunctions() []Junction {
	var out []Junction
	for i := range ruleTable {
		for m := range ruleTable[i].meets {
			out = append(out, Junction{ruleTable[i].rule, m})
		}
	}
	return out
}

// CheckPartners runs the kernel on tx as Rewrite does and, before every
// node step of the structural fixpoint, scans all pairs (x, y) of the
// root's kids: when a node rule's premise holds on the pair, y must be
// among the root tracker's candidates of x and x among those of y. It
// returns the number of firing pairs it checked and the first pair the
// candidates miss. With drop set, the tracker's partner lists are derived
// from a table without that junction (a test that the check can fail).
func CheckPartners(tx *Tx, cfg *Config, drop *Junction) (int, error) {
	partners := &partnerLists
	if drop != nil {
		table := slices.Clone(ruleTable[:])
		for i := range table {
			if table[i].rule == drop.Rule {
				table[i].meets = slices.Delete(slices.Clone(table[i].meets), drop.Meet, drop.Meet+1)
			}
		}
		p := derivePartnerLists(table)
		partners = &p
	}
	checked := 0
	var miss error
	fixpoint := func(k *kernel, root *Node) []*Node {
		kids := k.reduce(root)
		k.tr = newRootTracker(kids)
		k.tr.partners = partners
		s := &k.sib
		s.init(kids)
		for k.err == nil && miss == nil {
			n, err := k.allPairs(s)
			checked += n
			miss = err
			if !k.nodeStep(root.Frame, s) {
				break
			}
			k.leafPassRoot(root.Frame, s)
		}
		kids = s.compact()
		k.tr = nil
		return kids
	}
	k, _ := rewrite(tx, cfg, fixpoint)
	if k != nil && k.err != nil {
		return checked, k.err
	}
	return checked, miss
}

// allPairs checks every pair of live kids on which a node rule fires
// against the tracker's candidates.
func (k *kernel) allPairs(s *siblings) (int, error) {
	checked := 0
	var buf [maxPartnerLists][]entry
	has := func(x, y int32) bool {
		for _, l := range k.tr.candidates(x, &buf) {
			for _, e := range l {
				if k.tr.live(e) && e.s == y {
					return true
				}
			}
		}
		return false
	}
	for p := s.head; p >= 0; p = s.next[p] {
		for q := s.next[p]; q >= 0; q = s.next[q] {
			x, y := s.ns[p], s.ns[q]
			ops, ok := pairKind(x, y)
			if !ok {
				continue
			}
			for _, r := range stageRules[nodeStage][ops] {
				if a, _ := k.premise(r, x, y); a == nil {
					continue
				}
				checked++
				if !has(p, q) || !has(q, p) {
					return checked, fmt.Errorf("%s fires on (%s, %s) but the tracker does not pair them", r.rule, k.name(x), k.name(y))
				}
				break
			}
		}
	}
	return checked, nil
}
