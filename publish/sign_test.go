package publish

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
)

// keyPair writes a cosign-format key pair under dir and loads it.
func keyPair(t *testing.T, dir, prefix string) (*Signer, *Verifier) {
	t.Helper()
	priv, pub, err := GenerateKeyPair([]byte(os.Getenv(PasswordEnv)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") || !strings.Contains(string(pub), "PUBLIC KEY") {
		t.Fatalf("key files are not cosign's format:\n%s\n%s", priv, pub)
	}
	kf, pf := filepath.Join(dir, prefix+".key"), filepath.Join(dir, prefix+".pub")
	os.WriteFile(kf, priv, 0o600)
	os.WriteFile(pf, pub, 0o644)
	s, err := LoadSigner(kf)
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadVerifier(pf)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// TestSignVerify signs an image in go-containerregistry's in-process
// registry and checks what verification must refuse: another key, an
// unsigned digest, a signature copied to another digest, a tag moved to an
// unsigned image, a changed payload, a wrong password.
func TestSignVerify(t *testing.T) {
	t.Setenv(PasswordEnv, "correct horse")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ctx := context.Background()
	dir := t.TempDir()
	signer, verifier := keyPair(t, dir, "cosign")
	_, otherV := keyPair(t, dir, "other")
	repo, err := name.NewRepository(strings.TrimPrefix(srv.URL, "http://") + "/rv")
	if err != nil {
		t.Fatal(err)
	}
	push := func(tag string) name.Digest {
		img, err := random.Image(512, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(repo.Tag(tag), img); err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return repo.Digest(d.String())
	}
	signed, unsigned := push("best"), push("other")
	if err := Sign(ctx, signed, signer, map[string]string{"io.redis-variants.run": "20261207-000000"}); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []name.Reference{repo.Tag("best"), signed} {
		got, err := Verify(ctx, ref, verifier)
		if err != nil {
			t.Fatalf("verifying %s: %v", ref, err)
		}
		if got.Digest != signed.DigestStr() || got.Identity != repo.Name() || got.Optional["io.redis-variants.run"] != "20261207-000000" {
			t.Errorf("verified %+v", got)
		}
	}
	if _, err := Verify(ctx, signed, otherV); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("another key: %v, want a signature that does not match", err)
	}
	if _, err := Verify(ctx, unsigned, verifier); !errors.Is(err, ErrNoSignature) {
		t.Errorf("an unsigned digest: %v, want ErrNoSignature", err)
	}
	// a second signature adds a layer; the first still verifies
	if err := Sign(ctx, signed, signer, nil); err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(signed.DigestStr())
	sigImg, err := remote.Image(SignatureTag(repo, h))
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := sigImg.Layers(); len(ls) != 2 {
		t.Errorf("after two signings the signature image has %d layers, want 2", len(ls))
	}
	// the signature image copied to the unsigned digest's tag: its payload names the first digest
	hu, _ := v1.NewHash(unsigned.DigestStr())
	if err := remote.Write(SignatureTag(repo, hu), sigImg); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, unsigned, verifier); err == nil || !strings.Contains(err.Error(), "the payload signs") {
		t.Errorf("a signature copied to another digest: %v, want a payload naming another digest", err)
	}
	// the tag moved to another (unsigned) image
	moved := push("best")
	if _, err := Verify(ctx, repo.Tag("best"), verifier); !errors.Is(err, ErrNoSignature) {
		t.Errorf("a tag moved to an unsigned image (%s): %v, want ErrNoSignature", moved, err)
	}
	// a changed payload under the original signature
	m, _ := sigImg.Manifest()
	var p payload
	l, _ := sigImg.LayerByDigest(m.Layers[0].Digest)
	rc, _ := l.Compressed()
	json.NewDecoder(rc).Decode(&p)
	rc.Close()
	p.Critical.Image.DockerManifestDigest = moved.DigestStr()
	body, _ := json.Marshal(p)
	forged, err := mutate.Append(mutateBase(t), mutate.Addendum{Layer: static.NewLayer(body, SimpleSigningMediaType), Annotations: m.Layers[0].Annotations})
	if err != nil {
		t.Fatal(err)
	}
	hm, _ := v1.NewHash(moved.DigestStr())
	if err := remote.Write(SignatureTag(repo, hm), forged); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, moved, verifier); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a changed payload: %v, want a signature that does not match", err)
	}
	// a wrong password
	t.Setenv(PasswordEnv, "wrong")
	if _, err := LoadSigner(filepath.Join(dir, "cosign.key")); err == nil {
		t.Error("the key loaded with a wrong password")
	}
}

func mutateBase(t *testing.T) v1.Image {
	t.Helper()
	img, err := random.Image(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
