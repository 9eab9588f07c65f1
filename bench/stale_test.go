package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// TestResumeSetsAsideAnotherImagesRecords: the file was edited and b
// rebuilt under another image ID between two benches of one run folder.
// b's finished trials and replicates describe the old image, so the
// resumed bench sets them aside (.stale, out of every reader's way) and
// measures b again; the A/A control's are kept as they were.
func TestResumeSetsAsideAnotherImagesRecords(t *testing.T) {
	e := newProcEngine(t)
	images := func(b string) []Image {
		im := twoImages()
		im[0].ImageID, im[1].ImageID = "sha256:a1", b
		return im
	}
	o := testOptions(t, e, images("sha256:b1"))
	o.Trials = 1
	o.Profile.Replicates, o.Profile.Windows, o.Profile.AxisReplicates = 2, 1, 0
	o.Profile.Runtimes = variants.RuntimesFirst
	o.Profile.Memory = &variants.MemoryProfile{Target: 4 << 20, Sizes: "uniform:1K-4K", Overwrite: 0.5, Delete: 0.3, Replicates: 1}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	before, _, err := results.LoadReplicates(o.Run)
	if err != nil || len(before) != 4 {
		t.Fatalf("%d replicates, %v", len(before), err)
	}
	kept := map[string]time.Time{}
	for _, r := range before {
		if r.ImageID == "" || r.BaseID != "sha256:a1" {
			t.Fatalf("replicate %s #%d names images %q and %q", r.PairKey, r.Rep, r.ImageID, r.BaseID)
		}
		kept[fmt.Sprintf("%s#%d", r.PairKey, r.Rep)] = r.Windows[0].Started
	}

	o.Images = images("sha256:b2")
	sum, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// b's two replicates against a, its one standalone trial (SET under host)
	// and its memory server.
	if sum.Stale != 4 || sum.Replicates != 4 || sum.Total != 3 {
		t.Fatalf("resumed after b was rebuilt: %d stale, %d replicates, %d trials", sum.Stale, sum.Replicates, sum.Total)
	}
	after, _, _ := results.LoadReplicates(o.Run)
	for _, r := range after {
		at := kept[fmt.Sprintf("%s#%d", r.PairKey, r.Rep)]
		switch r.Image {
		case "b":
			if r.ImageID != "sha256:b2" || r.Windows[0].Started.Equal(at) {
				t.Errorf("b #%d: image %s, measured at %v (before: %v)", r.Rep, r.ImageID, r.Windows[0].Started, at)
			}
		default:
			if r.ImageID != "sha256:a1" || !r.Windows[0].Started.Equal(at) {
				t.Errorf("control #%d was measured again", r.Rep)
			}
		}
	}
	trials := checkTrials(t, o.Run, 3)
	for _, tr := range trials {
		if want := map[string]string{"a": "sha256:a1", "b": "sha256:b2"}[tr.Variant]; tr.ImageID != want {
			t.Errorf("trial of %s names image %q, want %q", tr.Variant, tr.ImageID, want)
		}
	}
	mem, _, err := results.LoadMemory(o.Run)
	if err != nil || len(mem) != 3 {
		t.Fatalf("%d memory trials, %v", len(mem), err)
	}
	for _, m := range mem {
		if want := map[string]string{"a": "sha256:a1", "b": "sha256:b2"}[m.Image]; m.ImageID != want {
			t.Errorf("memory trial of %s names image %q, want %q", m.Name(), m.ImageID, want)
		}
	}
	stale, _ := filepath.Glob(filepath.Join(o.Run.Dir, "*", "*", "*.stale"))
	more, _ := filepath.Glob(filepath.Join(o.Run.Dir, "*", "*", "*", "*.stale"))
	if n := len(stale) + len(more); n != 4 {
		t.Fatalf("%d records set aside on disk (%v %v), want 4", n, stale, more)
	}
}
