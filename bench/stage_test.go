package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
)

// fakeBench is an Interface that measures nothing: it returns sum and err
// and, while it runs, calls during.
type fakeBench struct {
	sum    Summary
	err    error
	during func()
	got    []Image
}

func (f *fakeBench) Bench(ctx context.Context, images []Image) (Summary, error) {
	f.got = images
	if f.during != nil {
		f.during()
	}
	return f.sum, f.err
}

// Record writes what the stage measured, also when it was interrupted,
// and nothing when it was refused before measuring.
func TestRecordWritesTheSummary(t *testing.T) {
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	images := []Image{{Name: "a"}, {Name: "b"}}

	refused := &fakeBench{err: errors.New("bench: nothing to run")}
	if _, err := Record(refused, run).Bench(context.Background(), images); err == nil {
		t.Fatal("the refusal was lost")
	}
	if run.Exists(results.BenchFile) {
		t.Fatal("a refused bench wrote bench.json")
	}

	interrupted := &fakeBench{sum: Summary{Profile: "quick", Done: 3, Finished: time.Now()}, err: context.Canceled}
	sum, err := Record(interrupted, run).Bench(context.Background(), images)
	if !errors.Is(err, context.Canceled) || sum.Done != 3 {
		t.Fatalf("got %+v, %v: want the interrupted summary and its error", sum, err)
	}
	if len(interrupted.got) != 2 {
		t.Fatalf("the wrapped stage got %v", interrupted.got)
	}
	back, err := LoadSummary(run)
	if err != nil || back.Done != 3 || back.Profile != "quick" {
		t.Fatalf("bench.json holds %+v, %v", back, err)
	}
}

// Locked holds the machine lock, recorded as bench's, for exactly as long
// as the wrapped stage runs, and a stage that cannot get it never runs.
func TestLockedHoldsTheMachineLock(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "machine.lock")
	var held string
	var blocked error
	f := &fakeBench{sum: Summary{Finished: time.Now()}, during: func() {
		held = machine.Holder(lock)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if unlock, err := machine.Lock(ctx, lock, "build", nil); err == nil {
			unlock()
		} else {
			blocked = err
		}
	}}
	if _, err := Locked(f, lock, nil).Bench(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(held, "bench pid ") {
		t.Fatalf("lock holder recorded as %q", held)
	}
	if blocked == nil {
		t.Fatal("a build took the machine lock while bench held it")
	}
	if b, _ := os.ReadFile(lock); len(b) != 0 {
		t.Fatalf("lock file still names a holder after bench: %q", b)
	}

	unlock, err := machine.Lock(context.Background(), lock, "build", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ran := false
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var log bytes.Buffer
	_, err = Locked(&fakeBench{during: func() { ran = true }}, lock, &log).Bench(ctx, nil)
	if err == nil || ran {
		t.Fatalf("bench ran (%v) under a build's lock: %v", ran, err)
	}
	if !strings.Contains(log.String(), "held by build pid") {
		t.Fatalf("the wait did not name the holder: %q", log.String())
	}
}
