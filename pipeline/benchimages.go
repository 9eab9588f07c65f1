package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// ImagesOptions say which published images `bench --images` measures.
type ImagesOptions struct {
	Images   []string // REGISTRY/REPO (every published variant in it) or REGISTRY/REPO:TAG or @DIGEST
	From     string   // a file listing such references, one per line ("#" comments)
	Insecure bool     // plain HTTP for a registry that is not local
}

func (o ImagesOptions) refs() ([]string, error) {
	refs := append([]string(nil), o.Images...)
	if o.From == "" {
		return refs, nil
	}
	f, err := os.Open(o.From)
	if err != nil {
		return nil, fmt.Errorf("--images-from: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			refs = append(refs, line)
		}
	}
	return refs, sc.Err()
}

// BenchImages benchmarks published images on this host without building
// them: each image is pulled by digest through Docker Engine and measured
// against the variants file's references (built or pulled here as usual),
// with the same method, into a new run folder, which is then ranked. Each
// image's build facts come from its labels (the variant spec publish and
// the builder write); its build record says it was pulled, from where and
// at which digest. This is how a second machine adds its row to history.
func BenchImages(ctx context.Context, c Config, bo BenchOptions, o ImagesOptions) error {
	refs, err := o.refs()
	if err != nil {
		return err
	}
	if len(refs) == 0 {
		return fmt.Errorf("--images: no image references given")
	}
	plan, err := c.Plan()
	if err != nil {
		return err
	}
	pulled, err := publishedVariants(ctx, refs, o.Insecure)
	if err != nil {
		return err
	}
	for _, v := range pulled {
		if r, ok := plan.Lookup(v.Name); ok && r.Reference {
			return fmt.Errorf("published image %s is named %s, like the reference of %s", v.Image, v.Name, c.File)
		}
	}
	bp := *plan
	bp.Variants = pulled
	if c.RunDir == "" {
		c.RunDir = filepath.Join(c.Runs, results.NewRunID(time.Now()))
	}
	run, err := results.Open(c.RunDir)
	if err != nil {
		return err
	}
	unlock, err := c.holdRun(run.Dir, "bench --images")
	if err != nil {
		return err
	}
	defer unlock()
	c.heldRun = run.Dir
	if err := writeMachine(run.Dir); err != nil {
		return err
	}
	if err := run.WritePlan(&bp); err != nil {
		return err
	}
	fmt.Fprintf(c.Err, "bench --images: %d published image(s) and %d reference(s) into %s\n", len(pulled), len(bp.References), run.Dir)
	p, closeP, err := c.printer()
	if err != nil {
		return err
	}
	res, err := buildWith(ctx, c, c.Err, "bench --images", builder.Options{Run: run, RunsRoot: c.Runs, Progress: p}, bp.All())
	closeP()
	for _, r := range res {
		fmt.Fprintf(c.Out, "%-28s %-7s %s\n", r.Variant.Name, r.Status, pulledFrom(r))
	}
	if err != nil {
		fmt.Fprintf(c.Err, "bench --images: %v (the others are measured)\n", err)
		if ctx.Err() != nil {
			return err
		}
	}
	if err := Bench(ctx, c, bo); err != nil {
		return err
	}
	return Rank(ctx, c, "")
}

func pulledFrom(r builder.Result) string {
	if r.Pulled != nil {
		return "pulled " + r.Pulled.Resolved + " " + r.Pulled.Digest
	}
	if r.Status == builder.StatusFailed {
		return r.Error
	}
	return r.Image
}

// publishedVariants resolves refs to images by digest and reads each
// one's variant spec from its labels. A repository without a tag stands
// for every published variant in it (its <version>-<variant> tags; the
// -best tags and referrers fallback tags name the same images again).
func publishedVariants(ctx context.Context, refs []string, insecure bool) ([]variants.Variant, error) {
	opts := publish.ReadOptions(ctx)
	var out []variants.Variant
	seen := map[string]string{} // digest → name
	// a tag naming an index of platforms (a published image and its
	// twins) resolves to this machine's platform: on an arm64 host, the
	// arm64 twin is what is measured
	plat, err := v1.ParsePlatform(engine.HostPlatform())
	if err != nil {
		return nil, err
	}
	opts = append(opts, remote.WithPlatform(*plat))
	add := func(ref name.Reference) error {
		img, err := remote.Image(ref, opts...)
		if err != nil {
			return fmt.Errorf("reading %s%s: %w", ref, artifact.StatusOf(err), err)
		}
		d, err := img.Digest()
		if err != nil {
			return fmt.Errorf("reading %s: %w", ref, err)
		}
		if _, ok := seen[d.String()]; ok {
			return nil
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return fmt.Errorf("reading the config of %s: %w", ref, err)
		}
		spec := cf.Config.Labels[publish.KeySpec]
		if spec == "" {
			return fmt.Errorf("%s (%s) has no %s label: it was not built by redis-variants, so its build facts are unknown (benchmark it as an image reference in the variants file instead)", ref, d, publish.KeySpec)
		}
		var v variants.Variant
		if err := json.Unmarshal([]byte(spec), &v); err != nil {
			return fmt.Errorf("%s: label %s: %w", ref, publish.KeySpec, err)
		}
		for _, o := range out {
			if o.Name == v.Name {
				return fmt.Errorf("%s and %s are both published as variant %s: benchmark one of them at a time", o.Image, ref.Context().Digest(d.String()), v.Name)
			}
		}
		v.Kind, v.Reference, v.Image = variants.KindImage, false, ref.Context().Digest(d.String()).String()
		seen[d.String()] = v.Name
		out = append(out, v)
		return nil
	}
	for _, s := range refs {
		ref, err := publish.Reference(s, insecure)
		if err != nil {
			return nil, err
		}
		if hasTagOrDigest(s) {
			if err := add(ref); err != nil {
				return nil, err
			}
			continue
		}
		tags, err := remote.List(ref.Context(), opts...)
		if err != nil {
			return nil, fmt.Errorf("listing the tags of %s%s: %w", ref.Context(), artifact.StatusOf(err), err)
		}
		n := len(out)
		for _, t := range tags {
			if strings.HasPrefix(t, "sha256-") || bestTag.MatchString(t) {
				continue
			}
			if err := add(ref.Context().Tag(t)); err != nil {
				return nil, err
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s holds no published variant image (tags: %s)", ref.Context(), strings.Join(tags, ", "))
		}
	}
	return out, nil
}

// bestTag matches publish's -best and -best-<level> tags.
var bestTag = regexp.MustCompile(`-best(-[a-z0-9]+)?$`)

// hasTagOrDigest reports whether s names a tag or digest, not only a
// repository (a registry's :port is not a tag).
func hasTagOrDigest(s string) bool {
	last := s[strings.LastIndex(s, "/")+1:]
	return strings.ContainsAny(last, ":@")
}
