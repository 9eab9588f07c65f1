package pipeline

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// PublishOptions are the flags of `redis-variants publish`.
type PublishOptions struct {
	To         string
	Repo       string
	Top        int
	Only       []string
	Runtime    string
	DryRun     bool
	Insecure   bool
	LayerCache string
	// Sign is a private key file (cosign's format): each image and its
	// results artifact are signed before any tag is written.
	Sign string
}

// publishRun returns --run, or the latest run under --runs.
func publishRun(c Config) (*results.Run, error) {
	return results.Find(c.RunDir, c.Runs, "run")
}

// Publish pushes the run's ranked, verified images with their evidence.
func Publish(ctx context.Context, c Config, o PublishOptions) error {
	run, err := publishRun(c)
	if err != nil {
		return err
	}
	unlock, err := c.holdRun(run.Dir, "publish")
	if err != nil {
		return err
	}
	defer unlock()
	reg := o.To
	if reg == "" {
		reg = c.Registry
	}
	errw := c.Err
	po := publish.Options{
		Registry: reg, Repo: o.Repo, Top: o.Top, Only: o.Only, Runtime: o.Runtime,
		DryRun: o.DryRun, Insecure: o.Insecure, LayerCache: o.LayerCache, Log: errw,
	}
	if o.Sign != "" {
		if po.Signer, err = publish.LoadSigner(o.Sign); err != nil {
			return err
		}
	}
	publishFn := publish.Publish
	if pulledRun(run) {
		// A bench --images run measured images that are published
		// already: its results are attached to them, nothing else.
		fmt.Fprintf(errw, "publish: %s benchmarked published images; attaching its results to them\n", run.Dir)
		publishFn = publish.Attach
	}
	pub, err := publishFn(ctx, run, po)
	printPublished(c.Out, errw, pub)
	return err
}

// pulledRun reports whether run is a `bench --images` run: every variant
// of its plan is a published image, pulled by digest.
func pulledRun(run *results.Run) bool {
	p, err := run.Plan()
	if err != nil || len(p.Variants) == 0 {
		return false
	}
	for _, v := range p.Variants {
		if v.Kind != variants.KindImage || !strings.Contains(v.Image, "@sha256:") || v.ID == "" {
			return false
		}
	}
	return true
}

// printPublished prints what was (or on a dry run would be) pushed, and
// the refusals and warnings on errw.
func printPublished(w, errw io.Writer, pub publish.Published) {
	for _, r := range pub.Refused {
		fmt.Fprintf(errw, "refused: %s\n", r.Reason)
	}
	for _, x := range pub.Warnings {
		fmt.Fprintf(errw, "warning: %s\n", x)
	}
	if pub.DryRun && len(pub.Images) > 0 {
		fmt.Fprintf(w, "dry run: would push to %s (runtime %s), nothing pushed\n", pub.Repository, pub.Runtime)
	}
	for _, im := range pub.Images {
		fmt.Fprintf(w, "%s (rank %d, %s)\n", im.Variant, im.Rank, im.Source)
		if im.Ref != "" {
			fmt.Fprintf(w, "  %s\n", im.Ref)
		}
		for _, t := range im.Platforms {
			switch {
			case t.Error != "":
				fmt.Fprintf(w, "  %s twin %s: error: %s\n", t.Platform, t.Variant, t.Error)
			case t.Ref != "":
				fmt.Fprintf(w, "  %s twin %s: %s\n", t.Platform, t.Variant, t.Ref)
			default:
				fmt.Fprintf(w, "  %s twin %s (%s)\n", t.Platform, t.Variant, t.Source)
			}
		}
		if im.Index != "" {
			fmt.Fprintf(w, "  index of its platforms, which the tags name: %s\n", im.Index)
		}
		tags := im.Tags
		if !pub.DryRun {
			tags = im.Pushed
		}
		for _, t := range tags {
			fmt.Fprintf(w, "  %s\n", t)
		}
		if im.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", im.Error)
		}
		if pub.DryRun {
			keys := make([]string, 0, len(im.Annotations))
			for k := range im.Annotations {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(w, "    %s=%s\n", k, im.Annotations[k])
			}
		}
	}
}
