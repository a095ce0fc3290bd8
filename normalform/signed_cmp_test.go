package normalform

import (
	"testing"

	"github.com/holiman/uint256"
)

func TestSignedCmp(t *testing.T) {
	s := func(neg bool, v uint64) Signed { return Signed{Neg: neg, Abs: *uint256.NewInt(v)} }
	ordered := []Signed{s(true, 7), s(true, 2), s(false, 0), s(true, 0), s(false, 3), s(false, 9)}
	for i := range ordered {
		for j := range ordered {
			want := 0
			si, sj := ordered[i], ordered[j]
			switch {
			case si.Abs.IsZero() && sj.Abs.IsZero():
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := si.Cmp(sj); got != want {
				t.Errorf("%s cmp %s = %d, want %d", si, sj, got, want)
			}
		}
	}
}
