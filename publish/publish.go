// Package publish pushes ranked, verified variant images from Docker Engine
// into any OCI registry with go-containerregistry, with their evidence
// attached: the variant spec and ID, the score and interval against each
// reference, the runtime configuration and CPU model they were measured on,
// the verify summary and the digest of the run's report, as image-config
// labels and manifest annotations. Layers are pushed untouched; only the
// config (labels) and manifest (annotations, OCI media types) change.
//
// Tags: <repo>:<redis-version>-<variant> for every published image,
// <repo>:<redis-version>-best for the best verified variant under the chosen
// runtime configuration, and <repo>:<redis-version>-best-<level> for the
// best one a CPU of that x86-64 level can run. Only variants that passed
// verification are published; references never are.
//
// Every image is first uploaded by digest and read back; tags are written
// only after that, so a failed upload leaves no tag behind. What was pushed
// is recorded in the run's published.json.
package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/results"
)

// DefaultRepo is the repository name used when Options.Repo is empty.
const DefaultRepo = "redis-variants"

// PublishedFile is the run-folder file that records every publication.
const PublishedFile = results.PublishedFile

// Options configure Publish.
type Options struct {
	Registry string   // registry host[:port] to push to (an http:// prefix means plain HTTP)
	Repo     string   // repository under the registry ("" = DefaultRepo)
	Top      int      // publish the Top best eligible variants (0 = all)
	Only     []string // publish only these variants (overrides Top)
	Runtime  string   // runtime configuration the ranking is read under ("" = "host")
	DryRun   bool     // select and describe, push nothing, write nothing

	// Insecure forces plain HTTP; localhost and 127.0.0.0/8 registries
	// always get it.
	Insecure bool
	// Source provides the images (nil = Docker Engine via engine.New).
	Source Source
	// Keychain resolves credentials (nil = authn.DefaultKeychain, the Docker config).
	Keychain authn.Keychain
	// Transport is the HTTP transport (nil = remote.DefaultTransport).
	Transport http.RoundTripper
	// Backoff is ggcr's retry schedule for transient HTTP failures
	// (zero = 1s, ×3, 3 steps).
	Backoff remote.Backoff
	// Attempts is how many times a push that failed at the connection
	// level (reset, refused, timeout) is tried in all (0 = 3).
	Attempts int
	// RequestTimeout bounds the wait for a registry's answer once a
	// request (with its body) is sent (0 = 2 minutes): a registry that
	// hangs is a timeout, retried like a dropped connection, not a
	// publish that never ends. Ignored when Transport is set.
	RequestTimeout time.Duration
	// LayerCache is a folder where compressed layers are kept between
	// publications, keyed by diff ID ("" = a temporary folder removed at
	// the end). Publishing a run to a second registry then compresses
	// nothing again.
	LayerCache string
	// Log receives progress lines (nil = none).
	Log io.Writer
	// Signer, when set, signs each uploaded image and its results
	// artifact (cosign's format, Sign) before any tag is written.
	Signer *Signer
}

func (o Options) withDefaults() Options {
	if o.Repo == "" {
		o.Repo = DefaultRepo
	}
	if o.Runtime == "" {
		o.Runtime = "host"
	}
	if o.Backoff.Steps == 0 {
		o.Backoff = remote.Backoff{Duration: time.Second, Factor: 3, Jitter: 0.1, Steps: 3}
	}
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 2 * time.Minute
	}
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	return o
}

// The publication record (published.json) is declared in results.
type (
	Published     = results.Published
	Image         = results.PublishedImage
	PlatformImage = results.PlatformImage
	Publications  = results.Publications
)

// Load reads every publication recorded in run's published.json (none when
// the file does not exist).
func Load(run *results.Run) ([]Published, error) { return run.Publications() }

// Source provides the image a build result names.
type Source interface {
	// Image returns ref's image; release frees what it holds once the
	// push is done.
	Image(ctx context.Context, ref string) (img v1.Image, release func(), err error)
}

// Saver is what EngineSource needs from Docker Engine (*engine.Client).
type Saver interface {
	SaveImage(ctx context.Context, ref string) (io.ReadCloser, error)
}

// EngineSource reads images out of Docker Engine: docker save into a
// temporary file under dir ("" = the system's), read with tarball.Image.
func EngineSource(s Saver, dir string) Source { return engineSource{s, dir} }

type engineSource struct {
	s   Saver
	dir string
}

func (e engineSource) Image(ctx context.Context, ref string) (v1.Image, func(), error) {
	rc, err := e.s.SaveImage(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	f, err := os.CreateTemp(e.dir, "publish-*.tar")
	if err != nil {
		return nil, nil, fmt.Errorf("saving image %s: %w", ref, err)
	}
	release := func() { os.Remove(f.Name()) }
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		release()
		return nil, nil, fmt.Errorf("saving image %s: %w", ref, err)
	}
	if err := f.Close(); err != nil {
		release()
		return nil, nil, fmt.Errorf("saving image %s: %w", ref, err)
	}
	img, err := tarball.ImageFromPath(f.Name(), nil)
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("reading saved image %s: %w", ref, err)
	}
	return img, release, nil
}

// RepoName returns the repository reference <registry>/<repo>, with plain
// HTTP for local registries or when insecure.
func RepoName(registry, repo string, insecure bool) (name.Repository, error) {
	reg := registry
	for _, p := range []string{"http://", "https://"} {
		if strings.HasPrefix(reg, p) {
			insecure = insecure || p == "http://"
			reg = strings.TrimPrefix(reg, p)
		}
	}
	reg = strings.TrimSuffix(reg, "/")
	if reg == "" {
		return name.Repository{}, errors.New("no registry given")
	}
	var opts []name.Option
	if insecure || isLocal(reg) {
		opts = append(opts, name.Insecure)
	}
	r, err := name.NewRepository(reg+"/"+repo, opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("repository %s/%s: %w", reg, repo, err)
	}
	return r, nil
}

// Repository parses a repository reference host[:port]/path (an http://
// prefix, or a local registry, for plain HTTP), as Reference does.
func Repository(s string) (name.Repository, error) {
	s, opts := scheme(s, false)
	r, err := name.NewRepository(strings.TrimSuffix(s, "/"), opts...)
	if err != nil {
		return name.Repository{}, fmt.Errorf("repository %q: %w", s, err)
	}
	return r, nil
}

// Reference parses a registry reference (by tag or digest), with plain
// HTTP for local registries, an http:// prefix or when insecure, as
// RepoName does.
func Reference(s string, insecure bool) (name.Reference, error) {
	s, opts := scheme(s, insecure)
	r, err := name.ParseReference(s, opts...)
	if err != nil {
		return nil, fmt.Errorf("reference %q: %w", s, err)
	}
	return r, nil
}

// scheme strips an http:// or https:// prefix from s and returns the name
// options it asks: plain HTTP for http://, a local registry or insecure.
func scheme(s string, insecure bool) (string, []name.Option) {
	for _, p := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			insecure, s = insecure || p == "http://", rest
		}
	}
	if insecure || isLocal(s) {
		return s, []name.Option{name.Insecure}
	}
	return s, nil
}

// ReadOptions are the go-containerregistry options of every read: the
// context, the Docker config's credentials, this tool's user agent.
func ReadOptions(ctx context.Context) []remote.Option {
	return Options{}.withDefaults().remoteOptions(ctx)
}

// remoteOptions are go-containerregistry's options for o (defaults
// applied): credentials, retries of transient HTTP failures, the
// transport, this tool's user agent.
func (o Options) remoteOptions(ctx context.Context) []remote.Option {
	ro := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(o.Keychain),
		remote.WithRetryBackoff(o.Backoff),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests,
			http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
		remote.WithUserAgent("redis-variants"),
	}
	if o.Transport != nil {
		ro = append(ro, remote.WithTransport(o.Transport))
	} else if t, ok := remote.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = o.RequestTimeout
		ro = append(ro, remote.WithTransport(t))
	}
	return ro
}

func isLocal(reg string) bool {
	host, _, _ := strings.Cut(reg, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Interface is the publish stage: it pushes a selection and says what it
// pushed (also on error: an image that fails does not stop the others).
// *Pusher pushes through go-containerregistry; Record wraps any Interface
// to append each publication to the run folder.
type Interface interface {
	Publish(ctx context.Context, sel *Selection) (Published, error)
}

var (
	_ Interface = (*Pusher)(nil)
	_ Interface = (*recorder)(nil)
)

// Publish pushes run's selected images (see Select) to opts.Registry and
// records the result in the run's published.json. On a dry run it only
// returns what would be pushed. An image that fails does not stop the
// others; the error then names every failure.
func Publish(ctx context.Context, run *results.Run, opts Options) (Published, error) {
	p, err := NewPusher(opts)
	if err != nil {
		return Published{}, err
	}
	sel, err := Select(run, p.opts)
	if err != nil {
		return Published{}, err
	}
	return Record(p, run).Publish(ctx, sel)
}

// Record appends what next pushed to run's published.json; a dry run, or
// a selection with nothing in it, pushed nothing and is not recorded.
func Record(next Interface, run *results.Run) Interface { return &recorder{next: next, run: run} }

type recorder struct {
	next Interface
	run  *results.Run
}

func (r *recorder) Publish(ctx context.Context, sel *Selection) (Published, error) {
	pub, err := r.next.Publish(ctx, sel)
	if pub.DryRun || len(pub.Images) == 0 {
		return pub, err
	}
	if rerr := r.run.AppendPublication(pub); rerr != nil {
		return pub, errors.Join(err, fmt.Errorf("recording the publication: %w", rerr))
	}
	return pub, err
}

// Pusher pushes selections to one repository with go-containerregistry:
// every image by digest, read back, and only then its tags.
type Pusher struct {
	opts Options
	repo name.Repository
}

// NewPusher checks opts' registry and repository.
func NewPusher(opts Options) (*Pusher, error) {
	opts = opts.withDefaults()
	repo, err := RepoName(opts.Registry, opts.Repo, opts.Insecure)
	if err != nil {
		return nil, err
	}
	return &Pusher{opts: opts, repo: repo}, nil
}

// Publish implements Interface.
func (pp *Pusher) Publish(ctx context.Context, sel *Selection) (Published, error) {
	opts, repo := pp.opts, pp.repo
	pub := plannedPublication(sel, repo, opts.DryRun)
	if len(sel.Images) == 0 {
		pub.Finished = time.Now().UTC()
		return pub, nothingError(sel)
	}
	if opts.DryRun {
		pub.Finished = time.Now().UTC()
		return pub, nil
	}
	src := opts.Source
	if src == nil {
		ec, err := engine.New(ctx)
		if err != nil {
			return pub, err
		}
		defer ec.Close()
		src = EngineSource(ec, "")
	}
	ropts := opts.remoteOptions(ctx)
	pusher, err := remote.NewPusher(ropts...)
	if err != nil {
		return pub, fmt.Errorf("setting up the pusher: %w", err)
	}
	ropts = append(ropts, remote.Reuse(pusher))
	cache := opts.LayerCache
	if cache == "" {
		if cache, err = os.MkdirTemp("", "redis-variants-layers-*"); err != nil {
			return pub, err
		}
		defer os.RemoveAll(cache)
	}
	p := &pushing{opts: opts, repo: repo, pusher: pusher, ropts: ropts, src: src, cache: &layerCache{cache}}

	// Phase 1: upload every image by digest and read it back; then its
	// twins (its spec for other platforms) and the index naming them all.
	imgs := make([]*manifest, len(sel.Images))
	tagged := make([]*manifest, len(sel.Images)) // what the tags name: the image, or its index
	var failed []string
	for i, s := range sel.Images {
		img, digest, err := p.upload(ctx, s)
		if err != nil {
			pub.Images[i].Error = err.Error()
			failed = append(failed, fmt.Sprintf("%s: %v", s.Variant.Name, err))
			p.logf("%s: %v\n", s.Variant.Name, err)
			continue
		}
		imgs[i], tagged[i] = img, img
		pub.Images[i].Digest = digest.String()
		pub.Images[i].Ref = repo.Digest(digest.String()).String()
		if len(s.Twins) == 0 {
			continue
		}
		idx, err := p.uploadTwins(ctx, s, img, &pub.Images[i])
		if err != nil {
			// no tag then: a tag would name the image without its platforms
			imgs[i], tagged[i] = nil, nil
			pub.Images[i].Error = strings.TrimPrefix(pub.Images[i].Error+"; "+err.Error(), "; ")
			failed = append(failed, fmt.Sprintf("%s: %v", s.Variant.Name, err))
			p.logf("%s: %v\n", s.Variant.Name, err)
			continue
		}
		tagged[i] = idx
	}
	// Phase 2: the run's results, attached to every uploaded image (and
	// index) as a referrer, before any tag: a tag always finds its evidence.
	if err := p.attach(ctx, sel, imgs, &pub); err != nil {
		failed = append(failed, err.Error())
	}
	for i := range tagged {
		if imgs[i] == nil {
			tagged[i] = nil // its attachment failed
		}
	}
	if err := p.attachIndexes(ctx, sel, imgs, tagged, &pub); err != nil {
		failed = append(failed, err.Error())
	}
	// Phase 2b: signatures, before any tag, so a tag never names an
	// unsigned image. An image whose signing failed gets no tag.
	if opts.Signer != nil {
		for i, s := range sel.Images {
			if imgs[i] == nil {
				continue
			}
			if err := p.sign(ctx, sel, s, &pub.Images[i]); err != nil {
				imgs[i], tagged[i] = nil, nil
				pub.Images[i].Error = strings.TrimPrefix(pub.Images[i].Error+"; "+err.Error(), "; ")
				failed = append(failed, fmt.Sprintf("%s: %v", s.Variant.Name, err))
			}
		}
	}
	// Phase 3: tags, only for images whose upload was confirmed: on the
	// image, or on the index of its platforms.
	for i, s := range sel.Images {
		if imgs[i] == nil || tagged[i] == nil {
			continue
		}
		for _, t := range s.Tags {
			ref := repo.Tag(t)
			if err := p.tag(ctx, ref, tagged[i]); err != nil {
				msg := fmt.Sprintf("tagging %s: %v", ref, err)
				pub.Images[i].Error = strings.TrimPrefix(pub.Images[i].Error+"; "+msg, "; ")
				failed = append(failed, fmt.Sprintf("%s: %s", s.Variant.Name, msg))
				continue
			}
			pub.Images[i].Pushed = append(pub.Images[i].Pushed, ref.String())
			p.logf("pushed %s (%s)\n", ref, tagged[i].digest)
		}
	}
	pub.Finished = time.Now().UTC()
	if len(failed) > 0 {
		return pub, fmt.Errorf("publishing to %s: %d failure(s): %s", repo, len(failed), strings.Join(failed, "; "))
	}
	return pub, nil
}

// plannedPublication is what publishing sel to repo will push: each
// image with its tags and annotations, nothing pushed yet.
func plannedPublication(sel *Selection, repo name.Repository, dryRun bool) Published {
	pub := Published{
		Run:        sel.Run,
		Registry:   repo.RegistryStr(),
		Repository: repo.String(),
		Runtime:    sel.Runtime,
		DryRun:     dryRun,
		Refused:    sel.Refused,
		Warnings:   sel.Warnings,
	}
	for _, s := range sel.Images {
		im := Image{
			Variant: s.Variant.Name, ID: s.Variant.ID, Rank: s.Entry.Rank, Level: s.Level,
			Source: s.Build.Image, SourceID: s.Build.ConfigDigest, Annotations: s.Meta,
		}
		for _, t := range s.Tags {
			im.Tags = append(im.Tags, repo.Tag(t).String())
		}
		if dryRun { // a push records each twin as it uploads it
			for _, t := range s.Twins {
				im.Platforms = append(im.Platforms, PlatformImage{Variant: t.Variant.Name, ID: t.Variant.ID, Platform: t.Variant.PlatformOf(), Source: t.Build.Image, SourceID: t.Build.ConfigDigest})
			}
		}
		pub.Images = append(pub.Images, im)
	}
	return pub
}

func nothingError(sel *Selection) error {
	if len(sel.Refused) == 0 {
		return fmt.Errorf("nothing to publish: no verified variant is ranked under runtime %s in %s", sel.Runtime, sel.Run)
	}
	var why []string
	for _, r := range sel.Refused {
		why = append(why, r.Reason)
	}
	return fmt.Errorf("nothing to publish: %s", strings.Join(why, "; "))
}

type pushing struct {
	opts   Options
	repo   name.Repository
	pusher *remote.Pusher
	ropts  []remote.Option
	src    Source
	cache  *layerCache
	bundle *artifact.Bundle // the run's results, packed at the first attachment
}

func (p *pushing) logf(format string, args ...any) {
	if p.opts.Log != nil {
		fmt.Fprintf(p.opts.Log, format, args...)
	}
}

// manifest is an uploaded image's manifest: all a tag needs.
type manifest struct {
	raw    []byte
	mt     types.MediaType
	digest v1.Hash
}

func (m *manifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m *manifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// upload reads s's image from the source, checks it is the image that was
// built and measured, adds the labels and annotations, pushes it by digest
// and reads the digest back.
func (p *pushing) upload(ctx context.Context, s Selected) (*manifest, v1.Hash, error) {
	src, release, err := p.src.Image(ctx, s.Build.Image)
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("reading image %s: %w", s.Build.Image, err)
	}
	defer release()
	cfgName, err := src.ConfigName()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("reading image %s: %w", s.Build.Image, err)
	}
	if want := s.Build.ConfigDigest; want != "" && cfgName.String() != want {
		return nil, v1.Hash{}, fmt.Errorf("image %s is %s, not %s as built, verified and measured: rebuild or rerun instead of publishing a different image", s.Build.Image, cfgName, want)
	}
	img, err := annotate(src, s.Meta, p.cache)
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("adding labels to %s: %w", s.Build.Image, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, v1.Hash{}, fmt.Errorf("computing the digest of %s: %w", s.Build.Image, err)
	}
	ref := p.repo.Digest(digest.String())
	p.logf("uploading %s as %s\n", s.Variant.Name, ref)
	if err := p.retry(ctx, func() error { return p.pusher.Push(ctx, ref, img) }); err != nil {
		return nil, v1.Hash{}, fmt.Errorf("pushing %s%s: %w", ref, artifact.StatusOf(err), err)
	}
	if err := p.check(ctx, ref, digest); err != nil {
		return nil, v1.Hash{}, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, v1.Hash{}, err
	}
	return &manifest{raw: raw, mt: mt, digest: digest}, digest, nil
}

// attach pushes the run's results artifact once per uploaded image, with
// the image as its subject, and records each artifact's reference. An
// image whose attachment fails keeps its upload but gets no tags.
func (p *pushing) attach(ctx context.Context, sel *Selection, imgs []*manifest, pub *Published) error {
	var todo []int
	for i := range imgs {
		if imgs[i] != nil {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	var errs []error
	for _, i := range todo {
		ref, err := p.attachOne(ctx, sel, imgs[i])
		if err != nil {
			imgs[i] = nil
			pub.Images[i].Error = strings.TrimPrefix(pub.Images[i].Error+"; "+err.Error(), "; ")
			errs = append(errs, fmt.Errorf("%s: attaching the results: %w", sel.Images[i].Variant.Name, err))
			continue
		}
		pub.Images[i].Results = ref
		p.logf("attached the results of %s to %s as %s\n", filepath.Base(sel.Run), sel.Images[i].Variant.Name, ref)
	}
	return errors.Join(errs...)
}

// attachOne pushes the run's results artifact (packed once per
// publication) with m as its subject and returns its reference.
func (p *pushing) attachOne(ctx context.Context, sel *Selection, m *manifest) (string, error) {
	if p.bundle == nil {
		b, err := artifact.Pack(&results.Run{Dir: sel.Run})
		if err != nil {
			return "", err
		}
		p.bundle = b
	}
	subject := v1.Descriptor{MediaType: m.mt, Size: int64(len(m.raw)), Digest: m.digest}
	var ref name.Digest
	err := p.retry(ctx, func() error {
		var err error
		ref, err = artifact.Push(ctx, p.bundle, p.repo, subject, p.ropts...)
		return err
	})
	if err != nil {
		return "", err
	}
	return ref.String(), nil
}

// sign signs an uploaded image and its results artifact, and its twins,
// index and the index's results artifact where it has them, recording the
// signature tags in pi.
func (p *pushing) sign(ctx context.Context, sel *Selection, s Selected, pi *Image) error {
	note := map[string]string{"io.redis-variants.run": filepath.Base(sel.Run), "io.redis-variants.variant": s.Variant.Name}
	refs := []string{pi.Ref, pi.Results, pi.Index, pi.IndexResults}
	for _, t := range pi.Platforms {
		refs = append(refs, t.Ref)
	}
	for _, ref := range refs {
		_, dg, ok := strings.Cut(ref, "@")
		if !ok {
			continue
		}
		d := p.repo.Digest(dg)
		if err := p.retry(ctx, func() error { return Sign(ctx, d, p.opts.Signer, note, p.ropts...) }); err != nil {
			return fmt.Errorf("signing %s: %w", d, err)
		}
		h, _ := v1.NewHash(dg)
		pi.Signatures = append(pi.Signatures, SignatureTag(p.repo, h).String())
		p.logf("signed %s\n", d)
	}
	return nil
}

// tag points ref at an uploaded manifest (a manifest PUT on the shared
// pusher) and reads it back.
func (p *pushing) tag(ctx context.Context, ref name.Tag, m *manifest) error {
	if err := p.retry(ctx, func() error { return p.pusher.Put(ctx, ref, m) }); err != nil {
		return fmt.Errorf("manifest PUT%s: %w", artifact.StatusOf(err), err)
	}
	return p.check(ctx, ref, m.digest)
}

// check reads ref's digest back from the registry.
func (p *pushing) check(ctx context.Context, ref name.Reference, want v1.Hash) error {
	var desc *v1.Descriptor
	err := p.retry(ctx, func() error {
		var err error
		desc, err = remote.Head(ref, p.ropts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("reading back %s: %w", ref, err)
	}
	if desc.Digest != want {
		return fmt.Errorf("reading back %s: registry has %s, pushed %s", ref, desc.Digest, want)
	}
	return nil
}

// retry runs f again after connection-level failures (a reset, a refused
// connection, a registry that did not answer within RequestTimeout) that
// ggcr's own retries (HTTP statuses, temporary errors) gave up on, with a
// doubling wait, while ctx lasts.
func (p *pushing) retry(ctx context.Context, f func() error) error {
	var err error
	wait := 500 * time.Millisecond
	for i := 0; i < p.opts.Attempts; i++ {
		// the caller's context ending is not the registry's failure (a
		// timeout awaiting the registry's answer also reads as a deadline)
		if err = f(); err == nil || ctx.Err() != nil || !connectionError(err) {
			return err
		}
		if i+1 < p.opts.Attempts {
			p.logf("retrying after %v\n", err)
			select {
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			case <-time.After(wait):
			}
			wait *= 2
		}
	}
	return fmt.Errorf("%w (gave up after %d attempts)", err, p.opts.Attempts)
}

func connectionError(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	case errors.As(err, &ne) && ne.Timeout():
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe")
}

// Annotate returns img as an OCI image with meta added to its config's
// labels and its manifest's annotations. The layers are the same blobs
// (their media type is declared as OCI's; the bytes do not change).
func Annotate(img v1.Image, meta map[string]string) (v1.Image, error) {
	return annotate(img, meta, nil)
}

// annotate is Annotate with the layers compressed through cache (when not nil).
func annotate(img v1.Image, meta map[string]string, cache *layerCache) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range meta {
		cf.Config.Labels[k] = v
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, err
	}
	out := img
	if mt != types.OCIManifestSchema1 || cache != nil {
		base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
		adds := make([]mutate.Addendum, len(layers))
		for i, l := range layers {
			if cache != nil {
				if l, err = cache.layer(l); err != nil {
					return nil, err
				}
			}
			lmt := types.OCILayer
			if m, err := l.MediaType(); err == nil && (m == types.OCIUncompressedLayer || m == types.DockerUncompressedLayer) {
				lmt = types.OCIUncompressedLayer
			}
			adds[i] = mutate.Addendum{Layer: l, MediaType: lmt}
		}
		if out, err = mutate.Append(base, adds...); err != nil {
			return nil, err
		}
	}
	if out, err = mutate.ConfigFile(out, cf); err != nil {
		return nil, err
	}
	return mutate.Annotations(out, meta).(v1.Image), nil
}

// attachSubjects picks, from a run's builds, the images pulled by digest
// from repo. Each subject is made from repo itself, so it is spoken to as
// repo is: plain HTTP only where repo allows it (a local registry, an
// http:// prefix, --insecure), never because the run's record named it.
func attachSubjects(builds map[string]results.Build, repo name.Repository) ([]name.Digest, []Image) {
	var subjects []name.Digest
	var images []Image
	for _, n := range slices.Sorted(maps.Keys(builds)) {
		b := builds[n]
		if b.Pulled == nil || b.Variant.Reference || b.Variant.Image == "" {
			continue
		}
		d, err := name.NewDigest(b.Variant.Image)
		if err != nil || d.Context().String() != repo.String() {
			continue
		}
		d = repo.Digest(d.DigestStr())
		subjects = append(subjects, d)
		images = append(images, Image{Variant: n, ID: b.Variant.ID, Source: b.Image, SourceID: b.ConfigDigest, Ref: d.String(), Digest: d.DigestStr()})
	}
	return subjects, images
}

// Attach adds run's results to images already in the registry: the
// published images a `bench --images` run pulled by digest from opts'
// repository (other entries are left alone). Nothing is pushed but the
// results artifact, one per image, with the image as its subject; the
// images and their tags are not touched. It returns the artifacts'
// references, and is recorded in published.json like a publication.
func Attach(ctx context.Context, run *results.Run, opts Options) (Published, error) {
	p, err := NewPusher(opts)
	if err != nil {
		return Published{}, err
	}
	opts, repo := p.opts, p.repo
	pub := Published{Run: run.Dir, Registry: repo.RegistryStr(), Repository: repo.String(), Runtime: opts.Runtime, DryRun: opts.DryRun}
	builds, _, err := results.LoadBuilds(run)
	if err != nil {
		return pub, err
	}
	subjects, images := attachSubjects(builds, repo)
	if len(subjects) == 0 {
		return pub, fmt.Errorf("nothing to attach: no entry of %s was pulled by digest from %s (attach applies to a `bench --images` run of that repository)", run.Dir, repo)
	}
	pub.Images = images
	if opts.DryRun {
		pub.Finished = time.Now().UTC()
		return pub, nil
	}
	bundle, err := artifact.Pack(run)
	if err != nil {
		return pub, err
	}
	ropts := opts.remoteOptions(ctx)
	var errs []error
	for i, d := range subjects {
		desc, err := remote.Head(d, ropts...)
		if err != nil {
			err = fmt.Errorf("%s: image %s%s: %w", images[i].Variant, d, artifact.StatusOf(err), err)
			pub.Images[i].Error, errs = err.Error(), append(errs, err)
			continue
		}
		ref, err := artifact.Push(ctx, bundle, repo, *desc, ropts...)
		if err != nil {
			pub.Images[i].Error, errs = err.Error(), append(errs, err)
			continue
		}
		pub.Images[i].Results = ref.String()
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "attached the results of %s to %s (%s) as %s\n", bundle.Run, images[i].Variant, d, ref)
		}
		if opts.Signer != nil {
			// the results are this run's: the image was signed by whoever published it
			note := map[string]string{"io.redis-variants.run": bundle.Run}
			if err := Sign(ctx, ref, opts.Signer, note, ropts...); err != nil {
				err = fmt.Errorf("%s: signing the results %s: %w", images[i].Variant, ref, err)
				pub.Images[i].Error, errs = err.Error(), append(errs, err)
				continue
			}
			h, _ := v1.NewHash(ref.DigestStr())
			pub.Images[i].Signatures = append(pub.Images[i].Signatures, SignatureTag(repo, h).String())
		}
	}
	pub.Finished = time.Now().UTC()
	if rerr := run.AppendPublication(pub); rerr != nil {
		errs = append(errs, fmt.Errorf("recording the attachment: %w", rerr))
	}
	return pub, errors.Join(errs...)
}
