package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/results"
)

// EmptyConfig is the OCI empty descriptor's content, the config of every
// artifact.
var EmptyConfig = static.NewLayer([]byte("{}"), types.OCIEmptyJSON)

// options adds the referrers tag fallback to the caller's options: without
// it a registry lacking the referrers API could not hold attachments.
func options(opts []remote.Option) []remote.Option {
	return append(slices.Clone(opts), remote.WithReferrersTagFallback(true))
}

// RawManifest is an OCI image manifest pushed as these exact bytes (an
// artifact's manifest, which go-containerregistry's image types would
// rewrite).
type RawManifest []byte

func (m RawManifest) RawManifest() ([]byte, error)        { return m, nil }
func (m RawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }

// Manifest returns the artifact manifest of b attached to subject.
func (b *Bundle) Manifest(subject v1.Descriptor) ([]byte, error) {
	cd, err := EmptyConfig.Digest()
	if err != nil {
		return nil, err
	}
	sub := v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  ArtifactType,
		Config:        v1.Descriptor{MediaType: types.OCIEmptyJSON, Size: 2, Digest: cd, Data: []byte("{}")},
		Layers:        b.Descriptors,
		Annotations:   b.Annotations,
		Subject:       &sub,
	}
	return json.Marshal(m)
}

// Push uploads b's blobs to repo, then its manifest by digest with subject
// (the published image's manifest) as its subject, and reads both the
// manifest and the subject's referrers back. It returns the artifact's
// reference by digest. Nothing existing is changed but the subject's
// referrers list (the API's, or the fallback tag's index, which gains one
// entry).
func Push(ctx context.Context, b *Bundle, repo name.Repository, subject v1.Descriptor, opts ...remote.Option) (name.Digest, error) {
	opts = options(append(opts, remote.WithContext(ctx)))
	p, err := remote.NewPusher(opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("pushing the results of %s to %s: %w", b.Run, repo, err)
	}
	for _, l := range append([]v1.Layer{EmptyConfig}, b.Layers...) {
		if err := p.Upload(ctx, repo, l); err != nil {
			return name.Digest{}, fmt.Errorf("pushing the results of %s to %s: uploading a blob%s: %w", b.Run, repo, StatusOf(err), err)
		}
	}
	raw, err := b.Manifest(subject)
	if err != nil {
		return name.Digest{}, err
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return name.Digest{}, err
	}
	ref := repo.Digest(h.String())
	if err := p.Put(ctx, ref, RawManifest(raw)); err != nil {
		return name.Digest{}, fmt.Errorf("pushing the results of %s as %s%s: %w", b.Run, ref, StatusOf(err), err)
	}
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("reading back %s: %w", ref, err)
	}
	if desc.Digest != h {
		return name.Digest{}, fmt.Errorf("reading back %s: registry has %s", ref, desc.Digest)
	}
	found, err := Find(ctx, repo.Digest(subject.Digest.String()), opts...)
	if err != nil {
		return name.Digest{}, err
	}
	for _, d := range found {
		if d.Digest == h {
			return ref, nil
		}
	}
	return name.Digest{}, fmt.Errorf("pushed %s, but %s's referrers do not list it", ref, subject.Digest)
}

// Find lists the results artifacts attached to the image subject, newest
// first (by their creation annotation).
func Find(ctx context.Context, subject name.Digest, opts ...remote.Option) ([]v1.Descriptor, error) {
	opts = options(append(opts, remote.WithContext(ctx), remote.WithFilter("artifactType", ArtifactType)))
	idx, err := remote.Referrers(subject, opts...)
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s%s: %w", subject, StatusOf(err), err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("listing the referrers of %s: %w", subject, err)
	}
	var out []v1.Descriptor
	for _, d := range im.Manifests {
		if d.ArtifactType == ArtifactType {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Annotations[AnnotationCreated] > out[j].Annotations[AnnotationCreated]
	})
	return out, nil
}

// Artifact is a results artifact read from a registry.
type Artifact struct {
	Ref      name.Digest
	Manifest *v1.Manifest
}

// Run is the run ID the artifact carries.
func (a *Artifact) Run() string { return a.Manifest.Annotations[AnnotationRun] }

// Resolve finds the results artifact ref names: ref itself when it is
// one, else the newest results artifact attached to the image ref names.
func Resolve(ctx context.Context, ref name.Reference, opts ...remote.Option) (*Artifact, error) {
	opts = options(append(opts, remote.WithContext(ctx)))
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading %s%s: %w", ref, StatusOf(err), err)
	}
	m, mErr := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if mErr == nil && (m.ArtifactType == ArtifactType || m.Subject != nil) {
		a := &Artifact{Ref: ref.Context().Digest(desc.Digest.String()), Manifest: m}
		return a, a.check()
	}
	found, err := Find(ctx, ref.Context().Digest(desc.Digest.String()), opts...)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s (%s) has no results artifact attached (publish attaches one to every image it pushes)", ref, desc.Digest)
	}
	return Get(ctx, ref.Context().Digest(found[0].Digest.String()), opts...)
}

// Get reads the results artifact at ref and checks its type and schema.
func Get(ctx context.Context, ref name.Digest, opts ...remote.Option) (*Artifact, error) {
	opts = options(append(opts, remote.WithContext(ctx)))
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading %s%s: %w", ref, StatusOf(err), err)
	}
	m, err := v1.ParseManifest(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil, fmt.Errorf("reading %s: not an OCI manifest: %w", ref, err)
	}
	a := &Artifact{Ref: ref, Manifest: m}
	return a, a.check()
}

// check refuses a manifest that is not a results artifact of a schema this
// version reads.
func (a *Artifact) check() error {
	m := a.Manifest
	if m.ArtifactType != ArtifactType {
		t := m.ArtifactType
		if t == "" {
			t = string(m.Config.MediaType)
		}
		return fmt.Errorf("%s is an artifact of type %q, not %s (a redis-variants results artifact)", a.Ref, t, ArtifactType)
	}
	if s := m.Annotations[AnnotationSchema]; s != Schema {
		return fmt.Errorf("%s is a results artifact of schema version %q; this redis-variants reads version %s (upgrade it to read newer artifacts)", a.Ref, s, Schema)
	}
	if a.Run() == "" || strings.ContainsAny(a.Run(), `/\`) || strings.HasPrefix(a.Run(), ".") {
		return fmt.Errorf("%s: bad run ID %q in %s", a.Ref, a.Run(), AnnotationRun)
	}
	if len(m.Layers) > MaxLayers {
		return fmt.Errorf("%s holds %d layers, more than the %d a results artifact may hold", a.Ref, len(m.Layers), MaxLayers)
	}
	var total int64
	for _, l := range m.Layers {
		if _, err := safeTitle(l); err != nil {
			return fmt.Errorf("%s: %w", a.Ref, err)
		}
		if l.Size < 0 || l.Size > MaxBlob {
			return fmt.Errorf("%s: layer %s (%s) is %d bytes; a results artifact layer holds at most %d", a.Ref, l.Digest, l.Annotations[AnnotationTitle], l.Size, MaxBlob)
		}
		total += l.Size
	}
	if total > MaxUnpacked {
		return fmt.Errorf("%s: its layers hold %d bytes, more than the %d a results artifact may hold", a.Ref, total, MaxUnpacked)
	}
	return nil
}

// SubjectExists reports whether the image the artifact is attached to is
// still in the registry.
func (a *Artifact) SubjectExists(ctx context.Context, opts ...remote.Option) (bool, error) {
	if a.Manifest.Subject == nil {
		return false, nil
	}
	_, err := remote.Head(a.Ref.Context().Digest(a.Manifest.Subject.Digest.String()), append(opts, remote.WithContext(ctx))...)
	var te *transport.Error
	if errors.As(err, &te) && te.StatusCode == 404 {
		return false, nil
	}
	return err == nil, err
}

func safeTitle(l v1.Descriptor) (string, error) {
	t := l.Annotations[AnnotationTitle]
	clean := path.Clean(strings.TrimSuffix(t, "/"))
	if t == "" || path.IsAbs(t) || clean == "." || strings.HasPrefix(clean, "..") || strings.Contains(clean, "/") {
		return "", fmt.Errorf("layer %s has an unsafe or missing title %q", l.Digest, t)
	}
	switch l.MediaType {
	case MediaTypeDir:
		if !strings.HasSuffix(t, "/") {
			return "", fmt.Errorf("folder layer %s has a title without a trailing slash: %q", l.Digest, t)
		}
	case MediaTypeJSON, MediaTypeMarkdown, MediaTypeCSV, MediaTypeHTML, MediaTypeFile:
	default:
		return "", fmt.Errorf("layer %s (%s) has media type %s, which a results artifact of schema %s does not hold", l.Digest, t, l.MediaType, Schema)
	}
	return clean, nil
}

// Pull writes the artifact's files as the run folder dir, which must not
// exist yet: into a temporary folder beside it, renamed into place once
// every blob has been read and checked against its digest.
func (a *Artifact) Pull(ctx context.Context, dir string, opts ...remote.Option) (*results.Run, error) {
	opts = append(opts, remote.WithContext(ctx))
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("pulling %s: %s already exists (a run folder is never overwritten)", a.Ref, dir)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".pull-*")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := a.check(); err != nil {
		return nil, err
	}
	budget := int64(MaxUnpacked) // what the pull may still write
	for _, l := range a.Manifest.Layers {
		title, err := safeTitle(l)
		if err != nil {
			return nil, err
		}
		data, err := a.blob(l, opts)
		if err != nil {
			return nil, err
		}
		if l.MediaType == MediaTypeDir {
			err = untarGz(data, tmp, title, &budget)
		} else {
			if budget -= int64(len(data)); budget < 0 {
				return nil, fmt.Errorf("pulling %s: %s would take the run folder past the %d bytes a results artifact may unpack to", a.Ref, title, MaxUnpacked)
			}
			err = os.WriteFile(filepath.Join(tmp, title), data, 0o644)
		}
		if err != nil {
			return nil, fmt.Errorf("pulling %s: writing %s: %w", a.Ref, title, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("pulling %s: %w", a.Ref, err)
	}
	ok = true
	return &results.Run{Dir: dir}, nil
}

// blob reads one layer; go-containerregistry checks its digest as it reads.
func (a *Artifact) blob(d v1.Descriptor, opts []remote.Option) ([]byte, error) {
	l, err := remote.Layer(a.Ref.Context().Digest(d.Digest.String()), opts...)
	if err != nil {
		return nil, fmt.Errorf("reading blob %s of %s: %w", d.Digest, a.Ref, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("reading blob %s of %s%s: %w", d.Digest, a.Ref, StatusOf(err), err)
	}
	defer rc.Close()
	// no more than the manifest declares (check bounds that): one byte
	// more says the blob is longer
	data, err := io.ReadAll(io.LimitReader(rc, d.Size+1))
	if err != nil {
		return nil, fmt.Errorf("reading blob %s of %s: %w", d.Digest, a.Ref, err)
	}
	if int64(len(data)) != d.Size {
		return nil, fmt.Errorf("reading blob %s of %s: %d bytes, the manifest says %d", d.Digest, a.Ref, len(data), d.Size)
	}
	return data, nil
}

// untarGz unpacks a folder layer under root; every entry must lie in the
// folder the layer is titled with, and all of them together may write no
// more than *budget bytes (which it lowers by what it writes): a small
// gzip can unpack to far more than its size.
func untarGz(data []byte, root, folder string, budget *int64) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Clean(h.Name)
		if !strings.HasPrefix(p, folder+"/") {
			return fmt.Errorf("entry %q lies outside %s/", h.Name, folder)
		}
		dst := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if h.Size > *budget {
			return fmt.Errorf("entry %q is %d bytes, more than the %d left of what a results artifact may unpack to", h.Name, h.Size, *budget)
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return err
		}
		*budget -= int64(len(b))
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
	}
}

// StatusOf returns " (HTTP 403)" when err is a registry error response.
func StatusOf(err error) string {
	var te *transport.Error
	if errors.As(err, &te) && te.StatusCode != 0 {
		return fmt.Sprintf(" (HTTP %d)", te.StatusCode)
	}
	return ""
}

// List finds every results artifact in repo: those attached to each tagged
// image, and those listed under a referrers fallback tag whose image is
// gone. Each run appears once (the newest of its attachments). An
// artifact whose image no longer exists is kept, and named in warnings:
// its measurements stand, but its images cannot be benchmarked again.
func List(ctx context.Context, repo name.Repository, opts ...remote.Option) ([]*Artifact, []string, error) {
	opts = options(append(opts, remote.WithContext(ctx)))
	tags, err := remote.List(repo, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the tags of %s%s: %w", repo, StatusOf(err), err)
	}
	subjects := map[string]bool{} // digest → tagged
	var order []string
	for _, t := range tags {
		if d, ok := fallbackSubject(t); ok {
			if _, seen := subjects[d]; !seen {
				subjects[d] = false
				order = append(order, d)
			}
			continue
		}
		desc, err := remote.Head(repo.Tag(t), opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s%s: %w", repo.Tag(t), StatusOf(err), err)
		}
		if _, seen := subjects[desc.Digest.String()]; !seen {
			order = append(order, desc.Digest.String())
		}
		subjects[desc.Digest.String()] = true
	}
	byRun := map[string]*Artifact{}
	var warnings []string
	for _, d := range order {
		found, err := Find(ctx, repo.Digest(d), opts...)
		if err != nil {
			return nil, warnings, err
		}
		for _, f := range found {
			a, err := Get(ctx, repo.Digest(f.Digest.String()), opts...)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("skipping %v", err))
				continue
			}
			if !subjects[d] {
				if ok, err := a.SubjectExists(ctx, opts...); err == nil && !ok {
					warnings = append(warnings, fmt.Sprintf("results artifact %s (run %s) is attached to %s, which is no longer in %s: its results are kept, but its image cannot be benchmarked again", a.Ref, a.Run(), d, repo))
				}
			}
			if prev, ok := byRun[a.Run()]; !ok || prev.created() < a.created() {
				byRun[a.Run()] = a
			}
		}
	}
	out := make([]*Artifact, 0, len(byRun))
	for _, a := range byRun {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run() < out[j].Run() })
	return out, warnings, nil
}

func (a *Artifact) created() string { return a.Manifest.Annotations[AnnotationCreated] }

// fallbackSubject returns the digest a referrers fallback tag
// (sha256-<hex>) stands for.
func fallbackSubject(tag string) (string, bool) {
	hex, ok := strings.CutPrefix(tag, "sha256-")
	if !ok || len(hex) != 64 {
		return "", false
	}
	return "sha256:" + hex, true
}
