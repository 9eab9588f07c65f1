package sbom

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Annotations of BuildKit's attestation manifests (attestation-storage.md).
const (
	annotRefType   = "vnd.docker.reference.type"
	annotRefDigest = "vnd.docker.reference.digest"
	refTypeAttest  = "attestation-manifest"
	annotPredicate = "in-toto.io/predicate-type"
	maxStatement   = 64 << 20
)

// Attestations are what an image index carries for one platform's image.
type Attestations struct {
	Image      string              `json:"image"`      // the platform image's reference by digest
	Platform   string              `json:"platform"`   // os/arch of that image
	Manifest   string              `json:"manifest"`   // the attestation manifest's digest
	SBOMs      map[string]Document `json:"sboms"`      // by document name: "sbom" (the image), "sbom-<stage>"
	Provenance json.RawMessage     `json:"provenance"` // the SLSA predicate
	ProvType   string              `json:"provenance_type"`
	Subjects   []Subject           `json:"subjects"` // the provenance statement's subjects
}

// Read finds, in the index ref names, the image for platform (os/arch)
// and the attestation manifest BuildKit attached to it, and reads its SPDX
// documents and its SLSA provenance, the way `docker buildx imagetools
// inspect --format '{{json .SBOM}}'` does.
func Read(ctx context.Context, ref name.Reference, platform string, opts ...remote.Option) (*Attestations, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	idx, err := remote.Index(ref, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading %s as an image index (an attested build is pushed as one): %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	var img *v1.Descriptor
	var have []string
	for i, m := range im.Manifests {
		if m.Platform == nil || m.Annotations[annotRefType] != "" {
			continue
		}
		p := m.Platform.OS + "/" + m.Platform.Architecture
		have = append(have, p)
		if p == platform || platform == "" {
			img = &im.Manifests[i]
		}
	}
	if platform == "" && len(have) > 1 {
		return nil, fmt.Errorf("%s holds images for %s: name the platform whose attestations to read", ref, strings.Join(have, ", "))
	}
	if img == nil {
		return nil, fmt.Errorf("%s has no %s image (it holds %s)", ref, platform, strings.Join(have, ", "))
	}
	platform = img.Platform.OS + "/" + img.Platform.Architecture
	out := &Attestations{Image: ref.Context().Digest(img.Digest.String()).String(), Platform: platform, SBOMs: map[string]Document{}}
	for _, m := range im.Manifests {
		if m.Annotations[annotRefType] != refTypeAttest || m.Annotations[annotRefDigest] != img.Digest.String() {
			continue
		}
		out.Manifest = m.Digest.String()
		am, err := remote.Image(ref.Context().Digest(m.Digest.String()), opts...)
		if err != nil {
			return nil, fmt.Errorf("reading the attestation manifest %s: %w", m.Digest, err)
		}
		mf, err := am.Manifest()
		if err != nil {
			return nil, err
		}
		for _, l := range mf.Layers {
			pt := l.Annotations[annotPredicate]
			if pt != PredicateSPDX && pt != PredicateSLSA1 && pt != PredicateSLSA02 {
				continue
			}
			if l.Size > maxStatement {
				return nil, fmt.Errorf("attestation %s: %d bytes", l.Digest, l.Size)
			}
			layer, err := am.LayerByDigest(l.Digest)
			if err != nil {
				return nil, err
			}
			rc, err := layer.Compressed()
			if err != nil {
				return nil, err
			}
			body, err := io.ReadAll(io.LimitReader(rc, maxStatement))
			rc.Close()
			if err != nil {
				return nil, err
			}
			var st struct {
				PredicateType string          `json:"predicateType"`
				Subject       []Subject       `json:"subject"`
				Predicate     json.RawMessage `json:"predicate"`
			}
			if err := json.Unmarshal(body, &st); err != nil {
				return nil, fmt.Errorf("attestation %s: %w", l.Digest, err)
			}
			switch st.PredicateType {
			case PredicateSPDX:
				var d Document
				if err := json.Unmarshal(st.Predicate, &d); err != nil {
					return nil, fmt.Errorf("SPDX document %s: %w", l.Digest, err)
				}
				out.SBOMs[d.Name] = d
			default:
				out.Provenance, out.ProvType, out.Subjects = st.Predicate, st.PredicateType, st.Subject
			}
		}
	}
	if out.Manifest == "" {
		return nil, fmt.Errorf("%s: the %s image %s has no attestation manifest", ref, platform, img.Digest)
	}
	return out, nil
}
