// Package profiles carries trained profiles through an OCI registry: a PGO
// build's merged profile, with its sha256 and the training's figures,
// packed as an OCI artifact of its own type and tagged by a key of
// everything the profile depends on (the variant's spec with its
// training, the recipe the training ran in, the load generator that
// drove it). A build on another machine, or a later run, that finds its
// key in a registry builds with the stored profile instead of training:
// the same profile bytes give the same optimised compile.
//
// The artifact is an OCI image manifest with artifactType ArtifactType,
// the empty config and one layer per file (its name in the
// org.opencontainers.image.title annotation, as ORAS writes files); the
// key's parts, the profile's sha256 and the CPU it was trained on are
// manifest annotations. Pull checks the key and the profile's sha256 and
// writes the files into a folder atomically.
package profiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/artifact"
)

// The artifact's type and annotations.
const (
	ArtifactType = "application/vnd.redis-variants.profile.v1"
	MediaType    = "application/octet-stream"

	AnnotationKey     = "io.redis-variants.profile.key"     // Key.Digest()
	AnnotationKind    = "io.redis-variants.profile.kind"    // "pgo"
	AnnotationSpec    = "io.redis-variants.profile.spec"    // the variant's canonical spec (variants.Spec)
	AnnotationRecipe  = "io.redis-variants.profile.recipe"  // the recipe's digest
	AnnotationLoadgen = "io.redis-variants.profile.loadgen" // sha256 of the load generator that trained it
	AnnotationSHA256  = "io.redis-variants.profile.sha256"  // of the profile file
	AnnotationFile    = "io.redis-variants.profile.file"    // the profile file's name
	AnnotationVariant = "io.redis-variants.profile.variant" // the name it was trained under
	AnnotationCPU     = "io.redis-variants.cpu"             // the CPU it was trained on
	AnnotationTitle   = "org.opencontainers.image.title"
	AnnotationCreated = "org.opencontainers.image.created"
)

// SHA256File is the file holding the profile's sha256, beside it.
const SHA256File = "profile.sha256"

// TrainingFile holds the training's figures (the load generator's CSV).
const TrainingFile = "training.csv"

// ProfileFiles are the names a profile may have: clang's merged profile
// and gcc's tar of .gcda files.
var ProfileFiles = []string{"redis.profdata", "redis.gcda.tar"}

// MaxBlob is the most bytes Pull reads of one file.
const MaxBlob = 256 << 20

// Key is everything a profile depends on. Two builds with the same key
// train the same instrumented binary with the same load: one's profile
// serves the other. The compiler's exact package version is not in it
// (it is known only inside the build): verify's "pgo profile used" check
// catches a profile the compiler finds out of date.
type Key struct {
	Kind    string `json:"kind"`    // "pgo"
	Spec    string `json:"spec"`    // variants.Spec of the variant, its training included
	Recipe  string `json:"recipe"`  // the recipe's digest (RECIPE_DIGEST)
	Loadgen string `json:"loadgen"` // sha256 of the static redis-loadgen
}

// Digest is the key's identity: the sha256 of its canonical JSON.
func (k Key) Digest() string {
	b, err := json.Marshal(k)
	if err != nil {
		panic(err) // strings cannot fail to marshal
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Tag is the tag a profile with this key is stored under.
func (k Key) Tag() string { return "profile-" + k.Kind + "-" + k.Digest()[:40] }

// Stored describes a profile in a registry.
type Stored struct {
	Ref     name.Digest `json:"ref"`     // the artifact, by digest
	Key     Key         `json:"key"`     // what it was trained for
	SHA256  string      `json:"sha256"`  // the profile file's
	File    string      `json:"file"`    // its name (ProfileFiles)
	Variant string      `json:"variant"` // the variant it was trained under
	CPU     string      `json:"cpu"`     // the CPU it was trained on
	Created string      `json:"created"`
	Bytes   int64       `json:"bytes"` // the profile file's size
}

// LoadgenDigest is the sha256 of the load generator binary at path.
func LoadgenDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading the load generator: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading the load generator: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Push stores the profile in dir (one of ProfileFiles, SHA256File and
// TrainingFile, as a PGO build exports them) in repo under k's tag, and
// reads it back. variant and cpu are recorded with it.
func Push(ctx context.Context, repo name.Repository, k Key, dir, variant, cpu string, opts ...remote.Option) (Stored, error) {
	opts = append(slices.Clone(opts), remote.WithContext(ctx))
	what := fmt.Sprintf("storing the %s profile of %s in %s", k.Kind, variant, repo)
	file, sum, err := profileIn(dir)
	if err != nil {
		return Stored{}, fmt.Errorf("%s: %w", what, err)
	}
	ann := map[string]string{
		AnnotationKey: k.Digest(), AnnotationKind: k.Kind, AnnotationSpec: k.Spec, AnnotationRecipe: k.Recipe,
		AnnotationLoadgen: k.Loadgen, AnnotationSHA256: sum, AnnotationFile: file, AnnotationVariant: variant,
		AnnotationCPU: cpu, AnnotationCreated: time.Now().UTC().Format(time.RFC3339),
	}
	p, err := remote.NewPusher(opts...)
	if err != nil {
		return Stored{}, fmt.Errorf("%s: %w", what, err)
	}
	if err := p.Upload(ctx, repo, artifact.EmptyConfig); err != nil {
		return Stored{}, fmt.Errorf("%s: uploading the config%s: %w", what, artifact.StatusOf(err), err)
	}
	var layers []v1.Descriptor
	for _, f := range []string{file, SHA256File, TrainingFile} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return Stored{}, fmt.Errorf("%s: %w", what, err)
		}
		l := static.NewLayer(data, MediaType)
		if err := p.Upload(ctx, repo, l); err != nil {
			return Stored{}, fmt.Errorf("%s: uploading %s%s: %w", what, f, artifact.StatusOf(err), err)
		}
		d, _ := l.Digest()
		layers = append(layers, v1.Descriptor{MediaType: MediaType, Size: int64(len(data)), Digest: d,
			Annotations: map[string]string{AnnotationTitle: f}})
	}
	cd, err := artifact.EmptyConfig.Digest()
	if err != nil {
		return Stored{}, err
	}
	raw, err := json.Marshal(v1.Manifest{
		SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: ArtifactType,
		Config: v1.Descriptor{MediaType: types.OCIEmptyJSON, Size: 2, Digest: cd, Data: []byte("{}")},
		Layers: layers, Annotations: ann,
	})
	if err != nil {
		return Stored{}, err
	}
	tag := repo.Tag(k.Tag())
	if err := p.Put(ctx, tag, artifact.RawManifest(raw)); err != nil {
		return Stored{}, fmt.Errorf("%s as %s%s: %w", what, tag, artifact.StatusOf(err), err)
	}
	s, ok, err := Lookup(ctx, repo, k, opts...)
	switch {
	case err != nil:
		return Stored{}, fmt.Errorf("%s: reading it back: %w", what, err)
	case !ok:
		return Stored{}, fmt.Errorf("%s: %s is not there after the push", what, tag)
	case s.SHA256 != sum:
		return Stored{}, fmt.Errorf("%s: %s holds profile %s, pushed %s", what, tag, s.SHA256, sum)
	}
	return s, nil
}

// profileIn finds the profile file in dir and checks it against its
// recorded sha256.
func profileIn(dir string) (file, sum string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, SHA256File))
	if err != nil {
		return "", "", fmt.Errorf("no profile sha256: %w", err)
	}
	want := strings.TrimSpace(string(b))
	for _, f := range ProfileFiles {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		s := sha256.Sum256(data)
		if got := hex.EncodeToString(s[:]); got != want || len(data) == 0 {
			return "", "", fmt.Errorf("%s has sha256 %s (%d bytes), %s says %s", f, got, len(data), SHA256File, want)
		}
		return f, want, nil
	}
	return "", "", fmt.Errorf("%s holds no profile (%s)", dir, strings.Join(ProfileFiles, " or "))
}

// Lookup finds the profile stored in repo under k: ok is false when the
// registry has none (no such tag, or no such repository). A tag holding
// something else, or a profile of another key, is an error.
func Lookup(ctx context.Context, repo name.Repository, k Key, opts ...remote.Option) (Stored, bool, error) {
	opts = append(slices.Clone(opts), remote.WithContext(ctx))
	tag := repo.Tag(k.Tag())
	desc, err := remote.Get(tag, opts...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && (te.StatusCode == http.StatusNotFound ||
			slices.ContainsFunc(te.Errors, func(d transport.Diagnostic) bool {
				return d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode
			})) {
			return Stored{}, false, nil
		}
		return Stored{}, false, fmt.Errorf("looking up %s%s: %w", tag, artifact.StatusOf(err), err)
	}
	s, err := parse(repo.Digest(desc.Digest.String()), desc.Manifest)
	if err != nil {
		return Stored{}, false, err
	}
	if s.Key != k {
		return Stored{}, false, fmt.Errorf("%s holds a profile for another key (%+v), want %+v", tag, s.Key, k)
	}
	return s, true, nil
}

// parse reads a profile artifact's manifest.
func parse(ref name.Digest, raw []byte) (Stored, error) {
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Stored{}, fmt.Errorf("reading %s: %w", ref, err)
	}
	if m.ArtifactType != ArtifactType {
		return Stored{}, fmt.Errorf("%s is an artifact of type %q, not %s", ref, m.ArtifactType, ArtifactType)
	}
	a := m.Annotations
	s := Stored{Ref: ref, SHA256: a[AnnotationSHA256], File: a[AnnotationFile], Variant: a[AnnotationVariant],
		CPU: a[AnnotationCPU], Created: a[AnnotationCreated],
		Key: Key{Kind: a[AnnotationKind], Spec: a[AnnotationSpec], Recipe: a[AnnotationRecipe], Loadgen: a[AnnotationLoadgen]}}
	if s.Key.Digest() != a[AnnotationKey] {
		return Stored{}, fmt.Errorf("%s: its key annotations do not hash to its key %s", ref, a[AnnotationKey])
	}
	if !slices.Contains(ProfileFiles, s.File) || len(m.Layers) != 3 {
		return Stored{}, fmt.Errorf("%s: not a profile artifact (file %q, %d layers)", ref, s.File, len(m.Layers))
	}
	for _, l := range m.Layers {
		if l.Annotations[AnnotationTitle] == s.File {
			s.Bytes = l.Size
		}
	}
	return s, nil
}

// Pull writes the stored profile's files into dir (replaced whole, or
// left as it was on an error) and checks the profile against the sha256
// the artifact records.
func Pull(ctx context.Context, s Stored, dir string, opts ...remote.Option) error {
	opts = append(slices.Clone(opts), remote.WithContext(ctx))
	desc, err := remote.Get(s.Ref, opts...)
	if err != nil {
		return fmt.Errorf("reading %s%s: %w", s.Ref, artifact.StatusOf(err), err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		return fmt.Errorf("reading %s: %w", s.Ref, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+"-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, l := range m.Layers {
		title := l.Annotations[AnnotationTitle]
		if title != s.File && title != SHA256File && title != TrainingFile {
			return fmt.Errorf("%s: unexpected layer %q", s.Ref, title)
		}
		if l.Size > MaxBlob {
			return fmt.Errorf("%s: %s is %d bytes, more than %d", s.Ref, title, l.Size, MaxBlob)
		}
		layer, err := remote.Layer(s.Ref.Context().Digest(l.Digest.String()), opts...)
		if err != nil {
			return fmt.Errorf("reading %s of %s: %w", title, s.Ref, err)
		}
		rc, err := layer.Compressed()
		if err != nil {
			return fmt.Errorf("reading %s of %s%s: %w", title, s.Ref, artifact.StatusOf(err), err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, l.Size+1))
		rc.Close()
		if err != nil {
			return fmt.Errorf("reading %s of %s: %w", title, s.Ref, err)
		}
		if int64(len(data)) != l.Size {
			return fmt.Errorf("reading %s of %s: %d bytes, the manifest says %d", title, s.Ref, len(data), l.Size)
		}
		if err := os.WriteFile(filepath.Join(tmp, title), data, 0o644); err != nil {
			return err
		}
	}
	if _, sum, err := profileIn(tmp); err != nil || sum != s.SHA256 {
		return fmt.Errorf("%s: the profile pulled is not the one recorded (%s): %v", s.Ref, s.SHA256, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// List returns every profile stored in repo, oldest first.
func List(ctx context.Context, repo name.Repository, opts ...remote.Option) ([]Stored, error) {
	opts = append(slices.Clone(opts), remote.WithContext(ctx))
	tags, err := remote.List(repo, opts...)
	if err != nil {
		return nil, fmt.Errorf("listing the tags of %s%s: %w", repo, artifact.StatusOf(err), err)
	}
	var out []Stored
	for _, t := range tags {
		if !strings.HasPrefix(t, "profile-") {
			continue
		}
		desc, err := remote.Get(repo.Tag(t), opts...)
		if err != nil {
			return nil, fmt.Errorf("reading %s%s: %w", repo.Tag(t), artifact.StatusOf(err), err)
		}
		s, err := parse(repo.Digest(desc.Digest.String()), desc.Manifest)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created < out[j].Created })
	return out, nil
}
