package publish

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/redis-variants/redis-variants/artifact"
)

// Signatures in cosign's key-based format, so cosign (`cosign verify
// --key cosign.pub IMAGE`) and this tool's verify-signature check the same
// thing offline: for the manifest sha256:<hex> in a repository, the image
// tagged sha256-<hex>.sig in that repository holds one layer per
// signature, a simple-signing payload naming the digest, with the ECDSA
// signature of the payload's sha256 (ASN.1, base64) in an annotation.
// Keys are cosign's: an encrypted private key (ENCRYPTED SIGSTORE PRIVATE
// KEY, its password in COSIGN_PASSWORD) and a PEM public key.
const (
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	SignatureAnnotation    = "dev.cosignproject.cosign/signature"
	signatureType          = "cosign container image signature"
	// PasswordEnv holds the private key's password, as for cosign.
	PasswordEnv = "COSIGN_PASSWORD"
)

// ErrNoSignature says a digest has no signature image at all.
var ErrNoSignature = errors.New("no signature")

// Signer signs image digests with an ECDSA private key.
type Signer struct{ key *ecdsa.PrivateKey }

// Verifier checks signatures with an ECDSA public key.
type Verifier struct{ key *ecdsa.PublicKey }

// LoadSigner reads a private key file (cosign's encrypted format, or an
// unencrypted PKCS#8 / SEC 1 PEM), its password from COSIGN_PASSWORD.
func LoadSigner(path string) (*Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	pass := []byte(os.Getenv(PasswordEnv))
	k, err := cryptoutils.UnmarshalPEMToPrivateKey(data, cryptoutils.StaticPasswordFunc(pass))
	if err != nil {
		return nil, fmt.Errorf("signing key %s (password from %s): %w", path, PasswordEnv, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key %s: a %T; this tool signs with ECDSA keys (cosign generate-key-pair, or redis-variants keygen)", path, k)
	}
	return &Signer{ek}, nil
}

// LoadVerifier reads a PEM public key file.
func LoadVerifier(path string) (*Verifier, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	k, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", path, err)
	}
	ek, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key %s: a %T, want ECDSA", path, k)
	}
	return &Verifier{ek}, nil
}

// Public is the verifier of the signer's key.
func (s *Signer) Public() *Verifier { return &Verifier{&s.key.PublicKey} }

// GenerateKeyPair returns a new ECDSA P-256 key pair as cosign writes it:
// the private key encrypted with password, and the public key.
func GenerateKeyPair(password []byte) (priv, pub []byte, err error) {
	return cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
}

// SignatureTag is where the signatures of digest d in repo are.
func SignatureTag(repo name.Repository, d v1.Hash) name.Tag {
	return repo.Tag(fmt.Sprintf("%s-%s.sig", d.Algorithm, d.Hex))
}

// payload is cosign's simple-signing payload.
type payload struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// ResolveDigest is the digest ref names now (a tag's, or a digest's own).
func ResolveDigest(ctx context.Context, ref name.Reference, opts ...remote.Option) (name.Digest, error) {
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(ref, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("resolving %s%s: %w", ref, artifact.StatusOf(err), err)
	}
	return ref.Context().Digest(desc.Digest.String()), nil
}

// Sign signs the manifest d and writes the signature image (adding to the
// signatures already there). annotations go into the payload's optional
// part (the run, the variant).
func Sign(ctx context.Context, d name.Digest, s *Signer, annotations map[string]string, opts ...remote.Option) error {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return err
	}
	var p payload
	p.Critical.Identity.DockerReference = d.Context().Name()
	p.Critical.Image.DockerManifestDigest = h.String()
	p.Critical.Type = signatureType
	if len(annotations) > 0 {
		p.Optional = map[string]any{}
		for k, v := range annotations {
			p.Optional[k] = v
		}
	}
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	sig, err := s.key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return fmt.Errorf("signing %s: %w", d, err)
	}
	tag := SignatureTag(d.Context(), h)
	base, err := remote.Image(tag, opts...)
	switch {
	case isNotFound(err):
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	case err != nil:
		return fmt.Errorf("reading %s: %w", tag, err)
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:       static.NewLayer(body, SimpleSigningMediaType),
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		return fmt.Errorf("writing the signature of %s to %s%s: %w", d, tag, artifact.StatusOf(err), err)
	}
	return nil
}

// Verified is one signature that checked.
type Verified struct {
	Digest    string            `json:"digest"`    // the manifest signed
	Identity  string            `json:"identity"`  // the repository the payload names
	Signature string            `json:"signature"` // the signature image's reference
	Optional  map[string]string `json:"optional,omitempty"`
}

// Verify checks that ref's manifest (a tag resolved to its digest now)
// carries a signature by v's key over a payload naming that digest.
// ErrNoSignature when there is no signature image; an error naming why
// each signature failed otherwise.
func Verify(ctx context.Context, ref name.Reference, v *Verifier, opts ...remote.Option) (*Verified, error) {
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	d, err := ResolveDigest(ctx, ref, opts...)
	if err != nil {
		return nil, err
	}
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return nil, err
	}
	tag := SignatureTag(d.Context(), h)
	img, err := remote.Image(tag, opts...)
	if isNotFound(err) {
		return nil, fmt.Errorf("%s: %w (no %s)", d, ErrNoSignature, tag)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", tag, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, err
	}
	var why []error
	for i, l := range m.Layers {
		out, err := checkLayer(img, l, h, v)
		if err == nil {
			out.Signature = tag.String()
			return out, nil
		}
		why = append(why, fmt.Errorf("signature %d: %w", i+1, err))
	}
	return nil, fmt.Errorf("%s: no valid signature by this key in %s: %w", d, tag, errors.Join(why...))
}

func checkLayer(img v1.Image, desc v1.Descriptor, want v1.Hash, v *Verifier) (*Verified, error) {
	if desc.MediaType != SimpleSigningMediaType {
		return nil, fmt.Errorf("media type %s", desc.MediaType)
	}
	sig, err := base64.StdEncoding.DecodeString(desc.Annotations[SignatureAnnotation])
	if err != nil || len(sig) == 0 {
		return nil, fmt.Errorf("no %s annotation", SignatureAnnotation)
	}
	l, err := img.LayerByDigest(desc.Digest)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	if got := fmt.Sprintf("sha256:%x", sum); got != desc.Digest.String() {
		return nil, fmt.Errorf("payload digest %s, manifest says %s", got, desc.Digest)
	}
	if !ecdsa.VerifyASN1(v.key, sum[:], sig) {
		return nil, errors.New("the signature does not match the payload under this key")
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("payload: %w", err)
	}
	if p.Critical.Type != signatureType {
		return nil, fmt.Errorf("payload type %q", p.Critical.Type)
	}
	if p.Critical.Image.DockerManifestDigest != want.String() {
		return nil, fmt.Errorf("the payload signs %s, not %s", p.Critical.Image.DockerManifestDigest, want)
	}
	out := &Verified{Digest: want.String(), Identity: p.Critical.Identity.DockerReference}
	for k, val := range p.Optional {
		if s, ok := val.(string); ok {
			if out.Optional == nil {
				out.Optional = map[string]string{}
			}
			out.Optional[k] = s
		}
	}
	return out, nil
}

func isNotFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == http.StatusNotFound
}
