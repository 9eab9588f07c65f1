package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/variants"
)

// plan --dockerfile prints exactly what Render returns.
func TestPlanDockerfile(t *testing.T) {
	c := Config{File: "../variants/testdata/tiny.yaml", State: t.TempDir()}
	plan, err := variants.Load(c.File)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := PrintRecipe(&out, c, plan, "gcc-o2-libc"); err != nil {
		t.Fatal(err)
	}
	v, _ := plan.Lookup("gcc-o2-libc")
	opt, _ := dockerfiles.HostOptions(c.SourcesDir())
	rec, err := dockerfiles.Render(v, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out.Bytes(), rec.Dockerfile) {
		t.Fatal("output does not start with the rendered Dockerfile")
	}
	rest := out.String()[len(rec.Dockerfile):]
	if !strings.Contains(rest, "# target: runtime\n") {
		t.Errorf("no target line:\n%s", rest)
	}
	for k, val := range rec.BuildArgs {
		if !strings.Contains(rest, "# build-arg: "+k+"="+val+"\n") {
			t.Errorf("build arg %s=%q missing", k, val)
		}
	}
	if err := PrintRecipe(&out, c, plan, "no-such"); err == nil || !strings.Contains(err.Error(), "gcc-o2-libc") {
		t.Errorf("unknown name: %v", err)
	}
}
