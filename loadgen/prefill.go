package loadgen

import (
	"context"
	"fmt"
)

// KeyName is the name the tests give key number i of the keyspace
// (redis-benchmark's "key:" followed by 12 zero-padded digits).
func KeyName(i int) string {
	b := []byte("key:000000000000")
	put12(b[4:], uint64(i))
	return string(b)
}

// Prefill sets every key of cfg's keyspace (key:000000000000 up to
// Keyspace − 1) to a value of DataSize bytes, in pipelined MSET batches,
// so that a GET test reads hits rather than an empty keyspace. It returns
// how many keys it set (0 when Keyspace is 0: the tests then use one fixed
// key, which Prefill sets too).
func Prefill(ctx context.Context, cfg Config) (int, error) {
	if err := cfg.setDefaults(); err != nil {
		return 0, fmt.Errorf("loadgen: %w", err)
	}
	ctl := cfg.control()
	defer ctl.Close()
	n := max(cfg.Keyspace, 1)
	val := data(&cfg)
	const batch = 1000
	pipe := ctl.Pipeline()
	for lo := 0; lo < n; lo += batch {
		args := make([]any, 0, 2*batch)
		for i := lo; i < min(lo+batch, n); i++ {
			name := KeyName(i)
			if cfg.Keyspace == 0 {
				name = "key:" + randPlaceholder
			}
			args = append(args, name, val)
		}
		pipe.MSet(ctx, args...)
		if pipe.Len() >= 20 || lo+batch >= n {
			if _, err := pipe.Exec(ctx); err != nil {
				return 0, fmt.Errorf("loadgen: prefilling %d keys on %s: %w", n, cfg.target(), err)
			}
		}
	}
	return n, nil
}

// Prepare sets up what cfg's one test reads, unmeasured: the keyspace for
// the tests that read keys (GET, MIXED's GETs: Prefill), the list an
// LRANGE test reads. Other tests need nothing.
func Prepare(ctx context.Context, cfg Config) error {
	if len(cfg.Tests) != 1 {
		return fmt.Errorf("loadgen: preparing %q: want one test", cfg.Tests)
	}
	defs, err := resolveTests(cfg.Tests)
	if err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	switch d := defs[len(defs)-1]; {
	case d.name == "GET" || d.name == "MIXED":
		_, err := Prefill(ctx, cfg)
		return err
	case d.lrange > 0:
		if err := cfg.setDefaults(); err != nil {
			return fmt.Errorf("loadgen: %w", err)
		}
		ctl := cfg.control()
		defer ctl.Close()
		if err := fillList(ctx, ctl, &cfg, d.lrange); err != nil {
			return fmt.Errorf("loadgen: preparing %s on %s: %w", d.name, cfg.target(), err)
		}
	}
	return nil
}
