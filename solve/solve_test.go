package solve

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bk "github.com/moby/buildkit/client"
)

// These tests solve on the real buildkitd set-up starts (make setup);
// FROM scratch needs no registry.

func connect(t *testing.T) *bk.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, Address())
	if err != nil {
		t.Fatalf("buildkitd is needed (make setup): %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func namedContext(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("hello from a named context\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const copyDockerfile = "FROM scratch AS out\nARG WHO\nCOPY --from=files hello /hello\nLABEL who=${WHO}\n"

func TestRunStreamsTarballAndWatches(t *testing.T) {
	c := connect(t)
	var names []string
	var statuses atomic.Int64
	resp, err := Run(context.Background(), c, Request{
		Dockerfile: []byte(copyDockerfile),
		Target:     "out",
		BuildArgs:  map[string]string{"WHO": "solve-test"},
		Contexts:   map[string]string{"files": namedContext(t)},
		Tarballs: []Tarball{{
			Type:  bk.ExporterDocker,
			Attrs: map[string]string{"name": "redis-variants/solve-test:latest"},
			Read: func(ctx context.Context, r io.Reader) error {
				tr := tar.NewReader(r)
				for {
					h, err := tr.Next()
					if err == io.EOF {
						return nil
					}
					if err != nil {
						return err
					}
					names = append(names, h.Name)
				}
			},
		}},
		Watch: []func(chan *bk.SolveStatus) error{
			func(ch chan *bk.SolveStatus) error {
				for range ch {
					statuses.Add(1)
				}
				return nil
			},
			func(ch chan *bk.SolveStatus) error {
				for range ch {
				}
				return errors.New("a watcher's own failure")
			},
		},
	})
	// The second watcher's failure is reported, but only after the solve
	// and the export went through.
	if err == nil || !strings.Contains(err.Error(), "a watcher's own failure") {
		t.Fatalf("watcher error not reported: %v", err)
	}
	if resp == nil {
		t.Fatal("no solve response")
	}
	if !contains(names, "manifest.json") {
		t.Fatalf("the docker tarball has no manifest.json: %v", names)
	}
	if statuses.Load() == 0 {
		t.Fatal("the watcher saw no status")
	}
}

func TestRunSolveErrorIsTheSolves(t *testing.T) {
	c := connect(t)
	read := false
	_, err := Run(context.Background(), c, Request{
		Dockerfile: []byte("FROM scratch\nCOPY --from=files missing /missing\n"),
		Contexts:   map[string]string{"files": namedContext(t)},
		Tarballs: []Tarball{{Type: bk.ExporterDocker, Attrs: map[string]string{"name": "redis-variants/solve-test:broken"},
			Read: func(ctx context.Context, r io.Reader) error {
				read = true
				_, err := io.Copy(io.Discard, r)
				return err
			}}},
	})
	var ee *ExportError
	if err == nil || errors.As(err, &ee) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("want the solve's own error naming the missing file, got %v", err)
	}
	if read {
		t.Fatal("the export's reader ran for a failed solve")
	}
}

func TestRunReaderFailureIsAnExportError(t *testing.T) {
	c := connect(t)
	_, err := Run(context.Background(), c, Request{
		Dockerfile: []byte(copyDockerfile),
		Contexts:   map[string]string{"files": namedContext(t)},
		Tarballs: []Tarball{{Type: bk.ExporterDocker, Attrs: map[string]string{"name": "redis-variants/solve-test:refused"},
			Read: func(ctx context.Context, r io.Reader) error { return errors.New("the engine refused the tarball") }}},
	})
	var ee *ExportError
	if !errors.As(err, &ee) || !strings.Contains(ee.Err.Error(), "refused the tarball") {
		t.Fatalf("want an ExportError with the reader's failure, got %v", err)
	}
}

func TestRunLocalExport(t *testing.T) {
	c := connect(t)
	out := t.TempDir()
	_, err := Run(context.Background(), c, Request{
		Dockerfile: []byte(copyDockerfile),
		Contexts:   map[string]string{"files": namedContext(t)},
		Exports:    []bk.ExportEntry{{Type: bk.ExporterLocal, OutputDir: out}},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "hello"))
	if err != nil || string(b) != "hello from a named context\n" {
		t.Fatalf("local export: %q %v", b, err)
	}
}

func TestConnectRefusesSilentDaemon(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Connect(ctx, "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	if err == nil || !strings.Contains(err.Error(), "none.sock") {
		t.Fatalf("want an error naming the address, got %v", err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
