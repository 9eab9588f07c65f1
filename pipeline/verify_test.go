package pipeline

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// fakeVerifier passes every image it is handed, or reports an
// interruption for the one named interrupt.
type fakeVerifier struct {
	seen      []verify.Target
	interrupt string
}

func (f *fakeVerifier) Verify(ctx context.Context, v variants.Variant, t verify.Target) verify.Report {
	f.seen = append(f.seen, t)
	if v.Name == f.interrupt {
		return verify.Report{Variant: v.Name, Status: verify.StatusInterrupted}
	}
	return verify.Report{Variant: v.Name, ID: v.ID, Image: t.Image, Status: verify.StatusPassed}
}

var _ verify.Interface = (*fakeVerifier)(nil)

func TestVerifyEntriesOnlyVerifiesGoodBuilds(t *testing.T) {
	run, _ := results.Open(t.TempDir())
	vs := []variants.Variant{
		{Name: "good", ID: "111111111111"},
		{Name: "broken", ID: "222222222222"},
		{Name: "stale", ID: "333333333333"},
		{Name: "unbuilt", ID: "444444444444"},
	}
	builds := map[string]builder.Result{
		"good":   {Variant: vs[0], Image: "redis-variants/good:111111111111", Status: builder.StatusOK, Server: "/usr/local/bin/redis-server"},
		"broken": {Variant: vs[1], Status: builder.StatusFailed, Error: "step make: exit 2"},
		"stale":  {Variant: variants.Variant{Name: "stale", ID: "999999999999"}, Image: "redis-variants/stale:999999999999", Status: builder.StatusOK},
	}
	f := &fakeVerifier{}
	reports, err := verifyEntries(context.Background(), f, run, vs, builds, verify.ProfileQuick, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.seen) != 1 || f.seen[0].Image != "redis-variants/good:111111111111" || f.seen[0].Server != "/usr/local/bin/redis-server" {
		t.Fatalf("verified %+v, want only the good build", f.seen)
	}
	want := map[string]string{"good": verify.StatusPassed, "broken": "exit 2", "stale": "build again", "unbuilt": "no build result"}
	if len(reports) != len(vs) {
		t.Fatalf("%d reports for %d entries", len(reports), len(vs))
	}
	for _, r := range reports {
		w := want[r.Variant]
		if r.Variant == "good" {
			if r.Status != w {
				t.Errorf("good: %s", r.Status)
			}
			continue
		}
		if r.Status != verify.StatusFailed || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], w) {
			t.Errorf("%s: %s %v, want failed saying %q", r.Variant, r.Status, r.Problems, w)
		}
		// written for bench and publish to see
		var onDisk verify.Report
		if err := run.ReadJSON(verify.Rel(r.Variant), &onDisk); err != nil || onDisk.Status != verify.StatusFailed {
			t.Errorf("%s: report on disk %+v %v", r.Variant, onDisk, err)
		}
	}

	// An interruption stops at the entry being verified.
	f = &fakeVerifier{interrupt: "good"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := verifyEntries(ctx, f, run, vs, builds, verify.ProfileQuick, io.Discard); err == nil {
		t.Fatal("an interrupted verification must fail")
	}
	if len(f.seen) != 0 {
		t.Fatalf("verified %d entries after the interrupt", len(f.seen))
	}
	f = &fakeVerifier{interrupt: "good"}
	if _, err := verifyEntries(context.Background(), f, run, vs[:1], builds, verify.ProfileQuick, io.Discard); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted report: %v", err)
	}
}
