package engine_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/engine/enginetest"
)

// TestPullOfficialByReference pulls redis:7.0.15 by its Docker Hub name.
// Set-up placed the rebuilt official image in the local registry as
// library/redis:7.0.15 and made that registry Docker Engine's mirror, so
// the name resolves exactly as it would online; the digest Docker Engine
// records must be the one the registry serves, and the same pull pinned to
// that digest must give the same image.
func TestPullOfficialByReference(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine and the local registry")
	}
	c := enginetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	local, err := name.ParseReference(enginetest.Registry()+"/library/redis:7.0.15", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(local, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("the local registry has no library/redis:7.0.15 (set-up places it there: make setup): %v", err)
	}
	p, err := c.Pull(ctx, "redis:7.0.15")
	if err != nil {
		t.Fatalf("pulling redis:7.0.15 through the mirror: %v", err)
	}
	if p.Digest != desc.Digest.String() {
		t.Errorf("pulled digest %s, the registry serves %s", p.Digest, desc.Digest)
	}
	if p.Resolved != "index.docker.io/library/redis:7.0.15" {
		t.Errorf("resolved as %q, want Docker Hub's fully qualified name", p.Resolved)
	}
	if p.Platform != engine.HostPlatform() {
		t.Errorf("platform %q, want %q", p.Platform, engine.HostPlatform())
	}
	t.Logf("redis:7.0.15 -> %s (%s), image %s", p.Digest, p.Platform, p.ID)

	pinned, err := c.Pull(ctx, "redis@"+desc.Digest.String())
	if err != nil {
		t.Fatalf("pulling by digest: %v", err)
	}
	if pinned.ID != p.ID || pinned.Digest != p.Digest {
		t.Errorf("pinned pull gave image %s digest %s, want %s %s", pinned.ID, pinned.Digest, p.ID, p.Digest)
	}
}

// Each fault is an error that names the reference.
func TestPullFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs a Docker Engine and the local registry")
	}
	c := enginetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg := enginetest.Registry()
	tag := fmt.Sprintf("t%d", time.Now().UnixNano())

	// An image for another platform, pushed with go-containerregistry.
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "arm64"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	armRef := reg + "/redis-variants-test/arm64:" + tag
	ar, _ := name.ParseReference(armRef, name.Insecure)
	if err := remote.Write(ar, img, remote.WithContext(ctx)); err != nil {
		t.Fatalf("pushing the arm64 test image: %v", err)
	}

	// A registry that refuses every credential.
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
	}))
	defer refuse.Close()
	host := strings.TrimPrefix(refuse.URL, "http://")
	cfgDir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("someone:wrong-password"))
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)

	for _, tc := range []struct {
		name, ref string
		want      []string // each must be in the error (any of the alternatives split by |)
	}{
		{"missing", reg + "/redis-variants-test/none:" + tag, []string{"not found|unknown|manifest"}},
		// A pinned digest the registry does not serve (Docker Engine checks
		// what it is served against the pin; this one is served nothing).
		{"digest-not-served", reg + "/library/redis@sha256:" + strings.Repeat("0", 64), []string{"not found|unknown|manifest|mismatch"}},
		{"other-platform", armRef, []string{"arm64|platform"}},
		{"refused-credentials", host + "/team/redis:7.0.15", []string{"unauthorized|authentication|401"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Pull(ctx, tc.ref)
			if err == nil {
				t.Fatalf("pulling %s succeeded (%+v); want an error", tc.ref, p)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.ref) {
				t.Errorf("the error does not name the reference %s: %v", tc.ref, err)
			}
			for _, alts := range tc.want {
				found := false
				for _, a := range strings.Split(alts, "|") {
					found = found || strings.Contains(strings.ToLower(msg), a)
				}
				if !found {
					t.Errorf("the error does not say %q: %v", alts, err)
				}
			}
			t.Logf("%s: %v", tc.ref, err)
		})
	}
	// The image for another platform is not left behind.
	if ok, err := c.ImageExists(ctx, armRef); err != nil || ok {
		t.Errorf("after the refused pull, Docker Engine still has %s (%v)", armRef, err)
	}
}
