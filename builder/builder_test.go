package builder

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	bk "github.com/moby/buildkit/client"
	digest "github.com/opencontainers/go-digest"
)

func TestTrackerCountsAndTail(t *testing.T) {
	tr := newTracker()
	d := func(s string) digest.Digest { return digest.FromString(s) }
	tr.update(&bk.SolveStatus{Vertexes: []*bk.Vertex{
		{Digest: d("a"), Name: "[internal] load build definition from Dockerfile"},
		{Digest: d("b"), Name: "[build 1/3] FROM docker.io/library/debian:bookworm-slim"},
		{Digest: d("c"), Name: "[build 2/3] COPY --from=source /src/redis /src/redis", Cached: true},
		{Digest: d("e"), Name: "[build 3/3] RUN make"},
	}})
	var log bytes.Buffer
	for i := 0; i < 50; i++ {
		log.WriteString("line\n")
	}
	log.WriteString("gcc-12: error: unrecognized command-line option '-fbad'\n")
	tr.update(&bk.SolveStatus{Logs: []*bk.VertexLog{{Vertex: d("e"), Data: log.Bytes()[:100]}, {Vertex: d("e"), Data: log.Bytes()[100:]}}})
	tr.update(&bk.SolveStatus{Vertexes: []*bk.Vertex{{Digest: d("e"), Name: "[build 3/3] RUN make", Error: `process "/bin/sh -c make" did not complete successfully: exit code: 2`}}})
	cached, total := tr.counts()
	if cached != 1 || total != 2 {
		t.Errorf("counts = %d/%d, want 1/2 (FROM and internal vertices are not steps)", cached, total)
	}
	tail := tr.failureTail(errors.New("solve failed"))
	if len(tail) != tailN {
		t.Errorf("tail has %d lines, want %d", len(tail), tailN)
	}
	joined := strings.Join(tail, "\n")
	if !strings.Contains(joined, "-fbad") || !strings.Contains(tail[len(tail)-1], "exit code: 2") {
		t.Errorf("tail does not end with the failure:\n%s", joined)
	}
}

// TestTrackerTailIsTheFailedStep: when a step fails, BuildKit cancels the
// steps of other stages running beside it; the tail is the failed step's
// even when a canceled one has output and was reported last.
func TestTrackerTailIsTheFailedStep(t *testing.T) {
	tr := newTracker()
	d := func(s string) digest.Digest { return digest.FromString(s) }
	tr.update(&bk.SolveStatus{Vertexes: []*bk.Vertex{
		{Digest: d("r"), Name: "[runtime 2/8] RUN check the base"},
		{Digest: d("s"), Name: "[source 3/3] RUN tar -xzf"},
	}})
	tr.update(&bk.SolveStatus{Logs: []*bk.VertexLog{{Vertex: d("r"), Data: []byte("the base image is amd64, not arm64\n")}, {Vertex: d("s"), Data: []byte("+ tar -xzf /tmp/redis.tar.gz\n")}}})
	tr.update(&bk.SolveStatus{Vertexes: []*bk.Vertex{{Digest: d("r"), Name: "[runtime 2/8] RUN check the base", Error: "exit code: 1"}}})
	tr.update(&bk.SolveStatus{Vertexes: []*bk.Vertex{{Digest: d("s"), Name: "[source 3/3] RUN tar -xzf", Error: "exit code: 137: context canceled: context canceled"}}})
	joined := strings.Join(tr.failureTail(errors.New("solve failed")), "\n")
	if !strings.Contains(joined, "not arm64") || strings.Contains(joined, "tar -xzf /tmp") {
		t.Errorf("tail is not the failed step's:\n%s", joined)
	}
	if name, _ := tr.failedStep(); !strings.Contains(name, "runtime 2/8") {
		t.Errorf("failed step %q", name)
	}
}

// TestTrackerStatus: the live line of a solve counts the Dockerfile steps
// done and cached of those known, and names the one running.
func TestTrackerStatus(t *testing.T) {
	tr := newTracker()
	if got := tr.status(); got != "resolving" {
		t.Errorf("empty: %q", got)
	}
	now := time.Now()
	tr.update(&bk.SolveStatus{Vertexes: []*bk.Vertex{
		{Digest: "sha256:a", Name: "[toolchain 1/3] RUN apt-get install gcc", Cached: true, Started: &now, Completed: &now},
		{Digest: "sha256:b", Name: "[build 2/3] COPY src /src", Started: &now, Completed: &now},
		{Digest: "sha256:c", Name: "[build 3/3] RUN make -j2", Started: &now},
		{Digest: "sha256:d", Name: "[internal] load metadata"},
	}})
	if got, want := tr.status(), "step 2/3 (1 cached) [build 3/3] RUN make -j2"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

func TestInsecureRegistry(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1:5000": true, "localhost:5000": true, "registry.example.com": false, "ghcr.io:443": false} {
		if insecureRegistry(h) != want {
			t.Errorf("insecureRegistry(%q) = %v", h, !want)
		}
	}
}

func TestFailedError(t *testing.T) {
	e := &FailedError{Failed: []string{"x", "y"}, Total: 7}
	if e.Error() != "2 of 7 builds failed: x, y" {
		t.Errorf("%q", e.Error())
	}
}
