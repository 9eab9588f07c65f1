package rank

import (
	"math"
	"strconv"
)

// Num is a float64 that encodes NaN and ±Inf as JSON null (and decodes
// null as NaN): "not applicable" survives a round trip through ranking.json.
type Num float64

var nan = Num(math.NaN())

// IsNaN reports whether n is NaN or infinite: a value that is not there.
func (n Num) IsNaN() bool { return math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) }

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	if n.IsNaN() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = nan
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*n = Num(f)
	return nil
}
