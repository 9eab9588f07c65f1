package builder

import (
	"bytes"
	"errors"
	"strings"
	"testing"

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

func TestPrefixWriter(t *testing.T) {
	var out bytes.Buffer
	w := &prefixWriter{w: &out, prefix: "[v] "}
	w.Write([]byte("one\ntw"))
	w.Write([]byte("o\n"))
	if out.String() != "[v] one\n[v] two\n" {
		t.Errorf("got %q", out.String())
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
