package layout

import "github.com/flowq/flowq/normalform"

// LakeAmountKey is the lake's amount_key column (index/lake writes it,
// planner/sqlgen compares with it): a signed 256-bit amount as 33 bytes
// ordered as the numbers are, 0x00 and the complement of the magnitude
// (big-endian) for a negative amount, 0x01 and the magnitude for zero and
// positive ones. Fixed width, unlike the index's profit keys (AmountBytes),
// so that SQL engines compare it as a blob.
func LakeAmountKey(s normalform.Signed) []byte {
	out := make([]byte, 33)
	mag := s.Abs.Bytes32()
	if s.Neg && !s.Abs.IsZero() {
		for i, b := range mag {
			out[1+i] = ^b
		}
		return out
	}
	out[0] = 1
	copy(out[1:], mag[:])
	return out
}

// LakeAmountFromKey decodes LakeAmountKey; false when k is not one.
func LakeAmountFromKey(k []byte) (normalform.Signed, bool) {
	var s normalform.Signed
	if len(k) != 33 || k[0] > 1 {
		return s, false
	}
	var mag [32]byte
	copy(mag[:], k[1:])
	if k[0] == 0 {
		for i := range mag {
			mag[i] = ^mag[i]
		}
		s.Neg = true
	}
	s.Abs.SetBytes32(mag[:])
	if s.Abs.IsZero() {
		s.Neg = false
	}
	return s, true
}
