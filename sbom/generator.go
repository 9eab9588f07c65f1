package sbom

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/publish"
)

// BinaryEnv names the generator binary when it is not beside this one.
const BinaryEnv = "RV_SBOM_BINARY"

// GeneratorRepo is the repository the generator image is pushed to.
const GeneratorRepo = "redis-variants-sbom"

// FindBinary returns the redis-variants-sbom binary: $RV_SBOM_BINARY, else
// the file of that name beside the running executable (make build puts
// both in .state/bin).
func FindBinary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(exe), "redis-variants-sbom")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("the SBOM generator redis-variants-sbom is not beside %s (make build puts it there; or set %s): %w", exe, BinaryEnv, err)
	}
	return p, nil
}

// EnsureGenerator pushes the generator binary as a one-file image
// (linux/amd64, its entrypoint the binary) to registry, tagged by the
// binary's sha256 so an unchanged generator is pushed once, and returns
// its reference by digest, for attest:sbom=generator=.
func EnsureGenerator(ctx context.Context, registry, binary string, opts ...remote.Option) (string, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return "", fmt.Errorf("SBOM generator: %w", err)
	}
	sum := sha256.Sum256(data)
	// a local registry is spoken to over plain HTTP, as publish does
	ref, err := publish.Reference(registry+"/"+GeneratorRepo+":"+hex.EncodeToString(sum[:])[:16], false)
	if err != nil {
		return "", err
	}
	tag, ok := ref.(name.Tag)
	if !ok {
		return "", fmt.Errorf("SBOM generator: %s is not a tag", ref)
	}
	opts = append([]remote.Option{remote.WithContext(ctx)}, opts...)
	if desc, err := remote.Head(tag, opts...); err == nil {
		return tag.Context().Digest(desc.Digest.String()).String(), nil
	}
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	if err := tw.WriteHeader(&tar.Header{Name: "redis-variants-sbom", Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return "", err
	}
	if _, err := tw.Write(data); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tb.Bytes())), nil })
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return "", err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config = v1.Config{Entrypoint: []string{"/redis-variants-sbom"}, Labels: map[string]string{"org.opencontainers.image.title": "redis-variants SBOM generator"}}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", err
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		return "", fmt.Errorf("pushing the SBOM generator to %s: %w", tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return tag.Context().Digest(d.String()).String(), nil
}
