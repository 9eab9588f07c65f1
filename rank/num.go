package rank

import (
	"math"

	"github.com/redis-variants/redis-variants/results"
)

// Num is a float64 that encodes NaN and ±Inf as JSON null (results.Num).
type Num = results.Num

var nan = Num(math.NaN())
