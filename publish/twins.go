package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/builder"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
	"github.com/redis-variants/redis-variants/verify"
)

// KeyTwinOf names, on a twin, the published image whose spec it was built
// from for its own platform.
const KeyTwinOf = "io.redis-variants.twin-of"

// Twin is a build of a selected image's spec for another platform (its
// twin: the same spec but platform and mcpu, variants.TwinKey), verified
// in the run. It is pushed beside the image, and the image's tags name an
// index of both. It was not benchmarked (no CPU here runs it natively):
// its labels say whose ranking its tags carry.
type Twin struct {
	Variant variants.Variant
	Build   builder.Result
	Meta    map[string]string
}

// twinsOf returns the twins of c in builds that may be published beside
// it (built, and verified as the very image built), one per platform, and
// why each other one may not.
func twinsOf(run *results.Run, c candidate, builds map[string]results.Build, reports map[string]verify.Report) ([]Twin, []string) {
	key := variants.TwinKey(c.v)
	var twins []Twin
	var warnings []string
	have := map[string]string{c.v.PlatformOf(): c.v.Name}
	for _, name := range slices.Sorted(maps.Keys(builds)) {
		b := builds[name]
		v := b.Variant
		if v.Name == c.v.Name || v.Kind != variants.KindVariant || v.Layout > 1 || b.Pulled != nil || variants.TwinKey(v) != key {
			continue
		}
		not := func(why string) {
			warnings = append(warnings, fmt.Sprintf("%s, the %s build of %s's spec, is not published beside it: %s", name, v.PlatformOf(), c.v.Name, why))
		}
		rep, verified := reports[name]
		switch {
		case have[v.PlatformOf()] != "":
			not(fmt.Sprintf("%s is already its %s image (an index holds one image a platform)", have[v.PlatformOf()], v.PlatformOf()))
		case b.Status != builder.StatusOK:
			not("its build " + b.Status)
		case !verified:
			not("it was not verified")
		case rep.ImageID != b.ConfigDigest:
			not(fmt.Sprintf("its verification describes image %s, not the one built (%s)", rep.ImageID, b.ConfigDigest))
		case rep.Status != verify.StatusPassed:
			not("its verification " + rep.Status)
		default:
			have[v.PlatformOf()] = name
			twins = append(twins, Twin{Variant: v, Build: b, Meta: twinMeta(run, c, v, b, rep)})
		}
	}
	return twins, warnings
}

// twinMeta is a twin's labels and annotations: its own identity and
// verification, the image it is the twin of, and no scores of its own.
func twinMeta(run *results.Run, c candidate, v variants.Variant, b builder.Result, rep verify.Report) map[string]string {
	m := identityMeta(run, v, b)
	m[KeyTwinOf] = c.v.Name
	m[KeyVerifyStatus] = rep.Status
	m[KeyVerify] = rep.Summary()
	m[KeyOCITitle] = "redis-variants " + v.Name
	m[KeyOCIVersion] = v.Redis
	desc := fmt.Sprintf("Redis %s built with %s -%s for %s", v.Redis, v.Compiler, v.Opt, v.PlatformOf())
	if v.Mcpu != "" {
		desc += " -mcpu=" + v.Mcpu
	}
	desc += fmt.Sprintf(": %s's spec, verified (%s); not benchmarked, the ranking on the tags is %s's on %s", c.v.Name, rep.Status, c.v.Name, c.v.PlatformOf())
	m[KeyOCIDescription] = desc
	return m
}

// platformIndex is the OCI index naming an uploaded image and its
// uploaded twins, each under its platform.
func platformIndex(main *manifest, mainPlatform string, twins []*manifest, twinPlatforms []string) (*manifest, error) {
	im := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	add := func(m *manifest, platform string) error {
		p, err := v1.ParsePlatform(platform)
		if err != nil {
			return err
		}
		im.Manifests = append(im.Manifests, v1.Descriptor{MediaType: m.mt, Size: int64(len(m.raw)), Digest: m.digest, Platform: p})
		return nil
	}
	if err := add(main, mainPlatform); err != nil {
		return nil, err
	}
	for i, t := range twins {
		if err := add(t, twinPlatforms[i]); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(im)
	if err != nil {
		return nil, err
	}
	d, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	return &manifest{raw: raw, mt: types.OCIImageIndex, digest: d}, nil
}

// uploadTwins uploads s's twins (checked, labelled and read back as the
// image is) and the index naming img and them, and records them in pi.
// It returns the index: what s's tags are to name.
func (p *pushing) uploadTwins(ctx context.Context, s Selected, img *manifest, pi *Image) (*manifest, error) {
	var twins []*manifest
	var platforms []string
	for _, t := range s.Twins {
		pl := PlatformImage{Variant: t.Variant.Name, ID: t.Variant.ID, Platform: t.Variant.PlatformOf(), Source: t.Build.Image, SourceID: t.Build.ConfigDigest}
		m, d, err := p.upload(ctx, Selected{Variant: t.Variant, Build: t.Build, Meta: t.Meta})
		if err != nil {
			pl.Error = err.Error()
			pi.Platforms = append(pi.Platforms, pl)
			return nil, fmt.Errorf("its %s twin %s: %w", pl.Platform, t.Variant.Name, err)
		}
		pl.Digest, pl.Ref = d.String(), p.repo.Digest(d.String()).String()
		pi.Platforms = append(pi.Platforms, pl)
		twins, platforms = append(twins, m), append(platforms, pl.Platform)
	}
	idx, err := platformIndex(img, s.Variant.PlatformOf(), twins, platforms)
	if err != nil {
		return nil, fmt.Errorf("the index of its platforms: %w", err)
	}
	ref := p.repo.Digest(idx.digest.String())
	if err := p.retry(ctx, func() error { return p.pusher.Put(ctx, ref, idx) }); err != nil {
		return nil, fmt.Errorf("pushing the index of its platforms %s: %w", ref, err)
	}
	if err := p.check(ctx, ref, idx.digest); err != nil {
		return nil, err
	}
	pi.Index = ref.String()
	p.logf("uploaded the index of %s's platforms (%s, %s) as %s\n", s.Variant.Name, s.Variant.PlatformOf(), strings.Join(platforms, ", "), ref)
	return idx, nil
}

// attachIndexes attaches the run's results to every uploaded index too,
// so that a reader who resolves a tag (an index) finds them. An index
// whose attachment fails gets no tags.
func (p *pushing) attachIndexes(ctx context.Context, sel *Selection, imgs, tagged []*manifest, pub *Published) error {
	var errs []error
	for i := range tagged {
		if tagged[i] == nil || tagged[i] == imgs[i] {
			continue
		}
		ref, err := p.attachOne(ctx, sel, tagged[i])
		if err != nil {
			tagged[i] = nil
			pub.Images[i].Error = strings.TrimPrefix(pub.Images[i].Error+"; "+err.Error(), "; ")
			errs = append(errs, fmt.Errorf("%s: attaching the results to its index: %w", sel.Images[i].Variant.Name, err))
			continue
		}
		pub.Images[i].IndexResults = ref
	}
	return errors.Join(errs...)
}
