package loadgen

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis-variants/redis-variants/loadgen/resp"
)

// BenchmarkRun measures the generator against a local redis-server: one
// op is one request; client-cpu-µs/op is the generator's CPU time per
// request. For the comparison with redis-benchmark, pinned to cores, use
// scripts/loadgen-vs-redis-benchmark.sh.
func BenchmarkRun(b *testing.B) {
	s := startRedis(b)
	for _, test := range []string{"SET", "GET", "LRANGE_100"} {
		for _, p := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/P%d", test, p), func(b *testing.B) {
				res, err := Run(context.Background(), Config{Addr: s.Addr, Clients: 50, Pipeline: p, Requests: int64(max(b.N, 1000)), Tests: []string{test}})
				if err != nil {
					b.Fatal(err)
				}
				r := res[0]
				if r.Errors != 0 {
					b.Fatalf("%d errors: %v", r.Errors, r.ErrorSamples)
				}
				b.ReportMetric(r.OpsPerSec, "ops/s")
				b.ReportMetric(float64(r.ClientCPU.Microseconds())/float64(r.Requests), "client-cpu-µs/op")
				b.ReportMetric(float64(r.ClientMaxRSS)/(1<<20), "maxrss-MiB")
			})
		}
	}
}

// BenchmarkBatchAndCheck measures the per-request work outside syscalls:
// patching a random key into a pipeline of 16 SETs and validating replies.
func BenchmarkBatchAndCheck(b *testing.B) {
	cfg := Config{Keyspace: 1000000}
	cfg.setDefaults()
	d, _ := lookupTest("SET")
	tt := &test{cfg: &cfg, def: d, cmds: d.commands(&cfg)}
	c := &conn{}
	k := tt.newKeyGen(1)
	st := newStats()
	kinds := make([]uint8, 16)
	b.ReportAllocs()
	for i := 0; i < b.N; i += 16 {
		buf := tt.batch(c, k, 16, kinds)
		_ = buf
		for j := 0; j < 16; j++ {
			rep := okReply
			tt.record(st, &rep, tt.checkOf(kinds[j]), int64(i)*1000, int64(i+30+j)*1000)
		}
	}
}

var okReply = func() (r resp.Reply) { r.Kind = '+'; r.Line = []byte("OK"); return }()
