package doctor

import (
	"context"
	"github.com/redis-variants/redis-variants/solve"
	"os"
	"strings"
	"testing"
	"time"
)

func registry() string {
	if r := os.Getenv("RV_REGISTRY"); r != "" {
		return r
	}
	return "127.0.0.1:5000"
}

// TestSmoke runs on the real buildkitd, Docker Engine and registry that
// scripts/setup.sh starts; without them it fails and says what is missing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs buildkitd, Docker Engine and the registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Smoke(ctx, solve.Address(), registry())
	if err != nil {
		t.Fatalf("smoke failed (are the daemons up? run: make setup): %v", err)
	}
	if !strings.HasPrefix(res.Output, "redis-variants smoke 12.") {
		t.Errorf("container printed %q, want a Debian 12 version", res.Output)
	}
	if !strings.Contains(res.Pushed, "@sha256:") {
		t.Errorf("pushed = %q", res.Pushed)
	}
}

func TestDoctorOnThisMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs the daemons")
	}
	cs := Run(context.Background(), Options{BuildKit: solve.Address(), Registry: registry(), BaseImages: []string{"debian:bookworm-slim"}, StateDir: os.TempDir(), MinFreeMB: 1})
	for _, c := range cs {
		if c.Required && !c.OK {
			t.Errorf("%s: %s (fix: %s)", c.Name, c.Detail, c.Fix)
		}
	}
}

func TestDoctorReportsWhatIsMissing(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	cs := Run(context.Background(), Options{BuildKit: "unix:///nonexistent/buildkitd.sock", Registry: "127.0.0.1:1", StateDir: os.TempDir(), MinFreeMB: 1 << 40})
	want := map[string]bool{"docker": false, "buildkitd": false, "registry": false, "disk": false}
	for _, c := range cs {
		if _, ok := want[c.Name]; ok {
			if c.OK || c.Fix == "" {
				t.Errorf("%s: ok=%v fix=%q, want a failure with a fix", c.Name, c.OK, c.Fix)
			}
			want[c.Name] = true
		}
	}
	for n, seen := range want {
		if !seen {
			t.Errorf("no %s check", n)
		}
	}
	if Failed(cs) < 4 {
		t.Errorf("Failed = %d, want >= 4", Failed(cs))
	}
}
