package builder

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/progress"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// fake is an Interface that builds nothing: it fails entries named bad-*,
// holds each build until `until` builds run at once (or for hold, when
// that is not reached), and counts how many ran at once.
type fake struct {
	hold    time.Duration
	until   int32
	running atomic.Int32
	most    atomic.Int32
	mu      sync.Mutex
	built   []string
}

func (f *fake) Build(ctx context.Context, v variants.Variant) Result {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		m := f.most.Load()
		if n <= m || f.most.CompareAndSwap(m, n) {
			break
		}
	}
	deadline := time.After(f.hold)
wait:
	for f.until > 0 && f.most.Load() < f.until {
		select {
		case <-deadline:
			break wait
		case <-ctx.Done():
			return Result{Variant: v, Status: StatusFailed, Error: "interrupted"}
		case <-time.After(time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
		return Result{Variant: v, Status: StatusFailed, Error: "interrupted"}
	default:
	}
	if f.until == 0 {
		select {
		case <-deadline:
		case <-ctx.Done():
			return Result{Variant: v, Status: StatusFailed, Error: "interrupted"}
		}
	}
	f.mu.Lock()
	f.built = append(f.built, v.Name)
	f.mu.Unlock()
	if strings.HasPrefix(v.Name, "bad-") {
		return Result{Variant: v, Image: ImageRef(v), Status: StatusFailed, Error: "it is bad"}
	}
	return Result{Variant: v, Image: ImageRef(v), Status: StatusOK}
}

var _ Interface = (*fake)(nil)

func entries(names ...string) []variants.Variant {
	var vs []variants.Variant
	for _, n := range names {
		vs = append(vs, variants.Variant{Name: n, ID: "0123456789ab", Kind: variants.KindVariant})
	}
	return vs
}

func TestLimitBoundsConcurrentBuilds(t *testing.T) {
	for _, jobs := range []int{1, 2, 3} {
		// Each build waits (up to 10 s) until jobs builds run at once: the
		// limit is reached whatever the scheduling, and never passed.
		f := &fake{hold: 10 * time.Second, until: int32(jobs)}
		res, err := All(context.Background(), Limit(f, jobs), entries("a", "b", "c", "d", "e", "f"))
		if err != nil || len(res) != 6 {
			t.Fatalf("jobs %d: %d results, %v", jobs, len(res), err)
		}
		if got := f.most.Load(); got != int32(jobs) {
			t.Errorf("jobs %d: %d builds ran at once", jobs, got)
		}
	}
}

func TestAllKeepsOrderAndNamesFailures(t *testing.T) {
	f := &fake{}
	res, err := All(context.Background(), Limit(f, 4), entries("a", "bad-b", "c", "bad-d"))
	var fe *FailedError
	if !errors.As(err, &fe) || fe.Total != 4 || strings.Join(fe.Failed, ",") != "bad-b,bad-d" {
		t.Fatalf("err = %v", err)
	}
	var names []string
	for _, r := range res {
		names = append(names, r.Variant.Name)
	}
	if strings.Join(names, ",") != "a,bad-b,c,bad-d" {
		t.Fatalf("results out of order: %v", names)
	}
}

func TestRecordWritesEveryResult(t *testing.T) {
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	pr, err := progress.New(w, progress.Quiet) // quiet: the failure's line only
	if err != nil {
		t.Fatal(err)
	}
	if _, err := All(context.Background(), Record(run, pr, Limit(&fake{}, 2)), entries("a", "bad-b")); err == nil {
		t.Fatal("a failed entry must fail the build")
	}
	for name, status := range map[string]string{"a": StatusOK, "bad-b": StatusFailed} {
		var r Result
		if err := run.ReadJSON("builds/"+name+".json", &r); err != nil || r.Status != status || r.Variant.Name != name {
			t.Errorf("builds/%s.json: %+v %v", name, r, err)
		}
	}
	if !strings.Contains(out.String(), "[bad-b] FAILED") || strings.Contains(out.String(), "[a] built") {
		t.Errorf("progress lines: %q", out.String())
	}
}

func TestAllStopsStartingWhenInterrupted(t *testing.T) {
	f := &fake{hold: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	res, err := All(ctx, Limit(f, 1), entries("a", "b", "c"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// At most one build was running (and says it was interrupted); the
	// others, waiting for its slot, never started a build.
	if f.most.Load() > 1 || len(f.built) != 0 {
		t.Fatalf("most %d, built %v", f.most.Load(), f.built)
	}
	for _, r := range res {
		if r.Status != StatusFailed || !strings.Contains(r.Error, "interrupt") {
			t.Errorf("%s: %+v", r.Variant.Name, r)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestAllBuildsDrawsAfterTheirSpec: with room for every build at once, a
// layout draw still starts only after its spec's build has ended (so it
// compiles nothing again), and draws of one spec then run together.
func TestAllBuildsDrawsAfterTheirSpec(t *testing.T) {
	f := &fake{hold: 30 * time.Millisecond}
	vs := entries("a", "b")
	for _, spec := range []string{"a", "b"} {
		for k := 2; k <= 3; k++ {
			vs = append(vs, variants.Variant{Name: variants.DrawName(spec, k), DrawOf: spec, Layout: k, ID: "0123456789ab", Kind: variants.KindVariant})
		}
	}
	if _, err := All(context.Background(), Limit(f, 8), vs); err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, n := range f.built {
		pos[n] = i
	}
	for _, v := range vs[2:] {
		if pos[v.Name] < pos[v.DrawOf] {
			t.Errorf("draw %s finished before its spec %s: %v", v.Name, v.DrawOf, f.built)
		}
	}
	if m := f.most.Load(); m < 3 {
		t.Errorf("at most %d builds at once: the draws should run beside each other", m)
	}
}
