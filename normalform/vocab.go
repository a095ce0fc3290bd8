package normalform

import "fmt"

// The engine's vocabulary, in one place: the names of verdicts, tiers,
// reasons, equivalence levels, detection paths and modes, how each prints
// and how each is read back. Everything above the engine that names one of
// them (the query language's checker, the REPL's completion, the index's
// validation of stored bytes) reads these tables; no other file lists
// them. The stored encodings use the numeric values, never the names.

var verdictNames = [...]string{"none", "warning", "arbitrage"}

func (v Verdict) String() string { return verdictNames[v] }

// Verdicts lists the verdicts, in their numeric order.
var Verdicts = []Verdict{VerdictNone, VerdictWarning, VerdictArbitrage}

// Valid says v is one of Verdicts (a decoded byte may not be).
func (v Verdict) Valid() bool { return int(v) < len(verdictNames) }

// ParseVerdict reads a verdict's name.
func ParseVerdict(s string) (Verdict, bool) {
	for _, v := range Verdicts {
		if v.String() == s {
			return v, true
		}
	}
	return VerdictNone, false
}

var tierNames = [...]string{"", "confirmed", "probable", "attempted", "uncertain"}

func (t Tier) String() string { return tierNames[t] }

// Tiers lists the tiers a verdict other than none has, in numeric order
// (TierNone, the empty tier of VerdictNone, is not among them).
var Tiers = []Tier{TierConfirmed, TierProbable, TierAttempted, TierUncertain}

// Valid says t is TierNone or one of Tiers.
func (t Tier) Valid() bool { return int(t) < len(tierNames) }

// Verdict is the verdict a tier grades: confirmed is an arbitrage, the
// others warnings; TierNone is VerdictNone's.
func (t Tier) Verdict() Verdict {
	switch t {
	case TierNone:
		return VerdictNone
	case TierConfirmed:
		return VerdictArbitrage
	}
	return VerdictWarning
}

// ParseTier reads a tier's name (not the empty one).
func ParseTier(s string) (Tier, bool) {
	for _, t := range Tiers {
		if t.String() == s {
			return t, true
		}
	}
	return TierNone, false
}

// ParseReason reads a reason's name.
func ParseReason(s string) (Reason, bool) {
	for _, r := range Reasons {
		if string(r) == s {
			return r, true
		}
	}
	return "", false
}

var levelNames = [...]string{"exact", "shape", "tokens", "family"}

func (l Level) String() string { return levelNames[l] }

// Levels lists the equivalence levels, from the finest to the coarsest.
var Levels = []Level{Exact, Shape, Tokens, Family}

// ParseLevel reads a level name.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("unknown equivalence level %q: want exact, shape, tokens or family", s)
}

var pathNames = [...]string{"", "fixpoint", "promotion", "bundle", "rotation", "inner"}

func (p Path) String() string {
	if int(p) < len(pathNames) {
		return pathNames[p]
	}
	return "unknown"
}

// Paths lists the detection paths, in the order a transaction's path is
// chosen among its detections.
var Paths = []Path{PathFixpoint, PathPromotion, PathBundle, PathRotation, PathInner}

// Valid says p is PathNone or one of Paths.
func (p Path) Valid() bool { return int(p) < len(pathNames) }

// ParsePath reads a path's name.
func ParsePath(s string) (Path, bool) {
	for _, p := range Paths {
		if p.String() == s {
			return p, true
		}
	}
	return PathNone, false
}

// Modes lists the modes, in order.
var Modes = []Mode{ModeTraces, ModeReceipts}

func (m Mode) String() string {
	if m == ModeReceipts {
		return "receipts"
	}
	return "traces"
}

// Valid says m is one of Modes.
func (m Mode) Valid() bool { return int(m) < len(Modes) }

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, bool) {
	for _, m := range Modes {
		if m.String() == s {
			return m, true
		}
	}
	return ModeTraces, false
}
