package rank

import "github.com/redis-variants/redis-variants/results"

// Trial is one finished standalone benchmark trial: results.Trial, the
// record the run folder holds under trials/.
type Trial = results.Trial
