package bench

import (
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// TestCheckMemory: a target the servers' limit cannot take, or a limit
// the machine cannot give, is refused before anything starts, with the
// numbers.
func TestCheckMemory(t *testing.T) {
	m := &variants.MemoryProfile{Target: 512 << 20, Replicates: 1}
	limit := MemoryLimit(m)
	if limit != 2048<<20+128<<20 {
		t.Fatalf("MemoryLimit = %d", limit)
	}
	if err := CheckMemory(m, limit, 8<<30); err != nil {
		t.Errorf("512 MiB on a machine with 8 GiB available: %v", err)
	}
	for _, c := range []struct {
		limit, avail int64
		want         string
	}{
		{limit, 1 << 30, "target 512 MiB needs a server of up to 2176 MiB, and this machine has 1024 MiB available"},
		{256 << 20, 8 << 30, "target 512 MiB does not fit the server's memory limit of 256 MiB"},
	} {
		if err := CheckMemory(m, c.limit, c.avail); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("limit %d, available %d: %v; want %q", c.limit, c.avail, err, c.want)
		}
	}
	if err := CheckMemory(nil, 0, 0); err != nil {
		t.Errorf("no memory workload: %v", err)
	}
}
