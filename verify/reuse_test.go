package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// fakeVerifier answers every verification with status, counting them.
type fakeVerifier struct {
	status string
	calls  int
}

func (f *fakeVerifier) Verify(_ context.Context, v variants.Variant, t Target) Report {
	f.calls++
	return Report{Variant: v.Name, ID: v.ID, Image: t.Image, Status: f.status, Profile: ProfileQuick}
}

// TestReuse: a passed verification is reused while its inputs are
// unchanged, under the entry's current name, saying which run proved it;
// another image ID, spec, profile, CPU or checks version verifies again;
// a failure is never kept; an image without an ID is always verified; an
// unreadable proof is verified again.
func TestReuse(t *testing.T) {
	dir := t.TempDir()
	run1 := &results.Run{Dir: filepath.Join(t.TempDir(), "run-1")}
	run2 := &results.Run{Dir: filepath.Join(t.TempDir(), "run-2")}
	o := Options{Profile: ProfileQuick, CPUFlags: []string{"sse4_2", "avx2"}, Sources: map[string]variants.Source{"redis-7.0.15": {SHA256: "abc"}}}
	v := variants.Variant{Name: "a", ID: "spec1", Redis: "7.0.15"}
	tg := Target{Image: "redis-variants/a:spec1", ID: "sha256:111", Recipe: "sha256:r1"}
	ctx := context.Background()

	inner := &fakeVerifier{status: StatusPassed}
	r := Reuse(dir, run1, o, inner).Verify(ctx, v, tg)
	if inner.calls != 1 || r.ReusedFrom != "" || r.ProofKey == "" {
		t.Fatalf("first verification: %d calls, %+v", inner.calls, r)
	}
	// The same image under another name, in another run: reused.
	v2 := v
	v2.Name = "b"
	tg2 := tg
	tg2.Image = "redis-variants/b:spec1"
	r = Reuse(dir, run2, o, inner).Verify(ctx, v2, tg2)
	if inner.calls != 1 || r.ReusedFrom != "run-1" || r.Variant != "b" || r.Image != tg2.Image || r.Status != StatusPassed {
		t.Fatalf("unchanged inputs: %d calls, %+v", inner.calls, r)
	}
	// Any input changed: verified again.
	changed := []func() (variants.Variant, Target, Options){
		func() (variants.Variant, Target, Options) { x := tg; x.ID = "sha256:222"; return v, x, o },
		func() (variants.Variant, Target, Options) { x := v; x.ID = "spec2"; return x, tg, o },
		func() (variants.Variant, Target, Options) { x := tg; x.Recipe = "sha256:r2"; return v, x, o },
		func() (variants.Variant, Target, Options) { x := o; x.Profile = ProfileFull; return v, tg, x },
		func() (variants.Variant, Target, Options) { x := o; x.CPUFlags = []string{"sse4_2"}; return v, tg, x },
		func() (variants.Variant, Target, Options) { x := o; x.NoExternal = true; return v, tg, x },
		func() (variants.Variant, Target, Options) {
			x := o
			x.Sources = map[string]variants.Source{"redis-7.0.15": {SHA256: "def"}}
			return v, tg, x
		},
	}
	for i, f := range changed {
		cv, ct, co := f()
		before := inner.calls
		if r := Reuse(dir, run2, co, inner).Verify(ctx, cv, ct); inner.calls != before+1 || r.ReusedFrom != "" {
			t.Errorf("change %d: %d calls, reused from %q", i, inner.calls-before, r.ReusedFrom)
		}
	}
	// The CPU flags' order is not a change.
	o2 := o
	o2.CPUFlags = []string{"avx2", "sse4_2"}
	before := inner.calls
	if r := Reuse(dir, run2, o2, inner).Verify(ctx, v, tg); inner.calls != before || r.ReusedFrom == "" {
		t.Errorf("flags reordered: verified again")
	}

	// A failure is not kept.
	bad := &fakeVerifier{status: StatusFailed}
	tb := tg
	tb.ID = "sha256:333"
	Reuse(dir, run1, o, bad).Verify(ctx, v, tb)
	Reuse(dir, run2, o, bad).Verify(ctx, v, tb)
	if bad.calls != 2 {
		t.Errorf("a failed verification was reused (%d calls)", bad.calls)
	}
	// No image ID: nothing to key by, always verified.
	none := tg
	none.ID = ""
	before = inner.calls
	Reuse(dir, run1, o, inner).Verify(ctx, v, none)
	Reuse(dir, run2, o, inner).Verify(ctx, v, none)
	if inner.calls != before+2 {
		t.Errorf("an image without an ID was reused")
	}
	// An unreadable proof: verified again, and the proof rewritten.
	in, _ := Inputs(v, tg, o)
	path := filepath.Join(dir, Key(in)+".json")
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = inner.calls
	Reuse(dir, run2, o, inner).Verify(ctx, v, tg)
	if r := Reuse(dir, run2, o, inner).Verify(ctx, v, tg); inner.calls != before+1 || r.ReusedFrom != "run-2" {
		t.Errorf("unreadable proof: %d calls, reused from %q", inner.calls-before, r.ReusedFrom)
	}
}
