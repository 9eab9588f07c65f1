// Package solve runs Dockerfile builds on buildkitd through BuildKit's Go
// client. It is the one place that dials buildkitd, lays out a build's local
// contexts, and runs a solve together with its progress watchers and the
// readers of its exported tarballs in one errgroup. The builder, verify's
// test-suite stage and doctor's smoke test all build through it.
package solve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bk "github.com/moby/buildkit/client"
	"github.com/tonistiigi/fsutil"
	"golang.org/x/sync/errgroup"
)

// DefaultAddress is where set-up starts buildkitd.
const DefaultAddress = "unix:///run/buildkit/buildkitd.sock"

// Address is buildkitd's address as the environment names it
// (BUILDKIT_HOST), else DefaultAddress. It is the one place the variable is
// read: the commands take it as their --buildkit default and pass it on.
func Address() string {
	if a := os.Getenv("BUILDKIT_HOST"); a != "" {
		return a
	}
	return DefaultAddress
}

// Connect dials buildkitd at addr ("" = DefaultAddress) and checks that it
// answers.
func Connect(ctx context.Context, addr string) (*bk.Client, error) {
	if addr == "" {
		addr = DefaultAddress
	}
	c, err := bk.New(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to buildkitd at %s: %w", addr, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Info(pctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("buildkitd does not answer at %s (start it with scripts/setup.sh, or set BUILDKIT_HOST): %w", addr, err)
	}
	return c, nil
}

// Request is one Dockerfile solve.
type Request struct {
	Dockerfile []byte
	Target     string            // the stage to build ("" = the last)
	Platform   string            // the platform to build for ("" = the builder's own)
	BuildArgs  map[string]string // build-arg:<name>
	// Contexts are named local contexts (name → folder), handed to the
	// Dockerfile frontend as context:<name>=local:<name>. "context", when
	// present, is the main build context; otherwise it is an empty folder.
	Contexts map[string]string
	// Exports are exporters BuildKit writes itself (a local folder, an OCI
	// layout, a registry push).
	Exports []bk.ExportEntry
	// Tarballs are exporters whose tarball a reader takes as it is written,
	// in the solve's errgroup (Docker Engine loading a docker tarball).
	Tarballs []Tarball
	// Watch receives every status update, each watcher from its own
	// channel, which it must drain until it is closed. A watcher's error
	// does not stop the solve; Run returns it only when all else went well.
	Watch     []func(chan *bk.SolveStatus) error
	SharedKey string
	// CacheExports and CacheImports are BuildKit cache exporters and
	// importers (see RegistryCache).
	CacheExports []bk.CacheOptionsEntry
	CacheImports []bk.CacheOptionsEntry
	// Attrs are further frontend attributes, as attest:provenance and
	// attest:sbom (BuildKit's attestations).
	Attrs map[string]string
}

// RegistryCache is BuildKit's registry cache at ref (repository:tag), in
// mode max (every stage's layers, not only the final image's), over plain
// HTTP when insecure. As an export it writes the cache; as an import, reads it.
func RegistryCache(ref string, insecure bool) bk.CacheOptionsEntry {
	a := map[string]string{"ref": ref, "mode": "max", "oci-mediatypes": "true", "ignore-error": "false"}
	if insecure {
		a["registry.insecure"] = "true"
	}
	return bk.CacheOptionsEntry{Type: "registry", Attrs: a}
}

// Tarball is an exporter (bk.ExporterDocker, bk.ExporterOCI) streamed to
// Read: started when BuildKit starts writing, given a reader that ends
// when the export does (with the solve's error when the solve fails).
type Tarball struct {
	Type  string
	Attrs map[string]string
	Read  func(ctx context.Context, r io.Reader) error
}

// ExportError is a failure of an exported tarball's reader (or an export
// BuildKit never wrote), as opposed to the solve's own.
type ExportError struct {
	Type string
	Err  error
}

func (e *ExportError) Error() string { return fmt.Sprintf("%s export: %v", e.Type, e.Err) }
func (e *ExportError) Unwrap() error { return e.Err }

// Run solves req on c. The error is the solve's own (as BuildKit gives it,
// for the caller to explain with the failed step), or an *ExportError when
// a tarball's reader failed first or BuildKit never exported it.
func Run(ctx context.Context, c *bk.Client, req Request) (*bk.SolveResponse, error) {
	tmp, err := os.MkdirTemp("", "redis-variants-solve-")
	if err != nil {
		return nil, fmt.Errorf("solve: %w", err)
	}
	defer os.RemoveAll(tmp)
	attrs, mounts, err := frontendInputs(req, tmp)
	if err != nil {
		return nil, err
	}

	g, gctx := errgroup.WithContext(ctx)
	// The solve's own context: a tarball reader that fails cancels it only
	// after readerGrace, for the solve to fail on its own first when that
	// is why the tarball was cut short.
	solveCtx, cancelSolve := context.WithCancel(gctx)
	defer cancelSolve()

	// Tarball exports: each reader starts when BuildKit opens the export.
	var solved atomic.Bool
	type tarball struct {
		pw       *io.PipeWriter
		started  atomic.Bool
		mu       sync.Mutex
		err      error
		ownError bool // the reader failed while the solve still ran
	}
	tbs := make([]*tarball, len(req.Tarballs))
	exports := slices.Clone(req.Exports)
	for i, t := range req.Tarballs {
		pr, pw := io.Pipe()
		tb := &tarball{pw: pw}
		tbs[i] = tb
		var once sync.Once
		exports = append(exports, bk.ExportEntry{
			Type:  t.Type,
			Attrs: t.Attrs,
			Output: func(map[string]string) (io.WriteCloser, error) {
				once.Do(func() {
					tb.started.Store(true)
					g.Go(func() error {
						err := t.Read(gctx, pr)
						// Unblock the exporter if the reader stopped reading.
						pr.CloseWithError(errOr(err, io.ErrClosedPipe))
						tb.mu.Lock()
						tb.err, tb.ownError = err, err != nil && !solved.Load()
						tb.mu.Unlock()
						if tb.ownError {
							time.AfterFunc(readerGrace, cancelSolve)
						}
						return nil
					})
				})
				return pw, nil
			},
		})
	}

	// Status fan-out: one channel per watcher, drained to the end whatever
	// the solve does (watchers are not cancelled with it).
	ch, watchers := fanOut(req.Watch)

	var resp *bk.SolveResponse
	var solveErr error
	g.Go(func() error {
		resp, solveErr = c.Solve(solveCtx, nil, bk.SolveOpt{
			Frontend:      "dockerfile.v0",
			FrontendAttrs: attrs,
			LocalMounts:   mounts,
			Exports:       exports,
			SharedKey:     req.SharedKey,
			CacheExports:  req.CacheExports,
			CacheImports:  req.CacheImports,
		}, ch)
		solved.Store(true)
		for _, tb := range tbs {
			tb.pw.CloseWithError(solveErr) // nil: the reader sees the end of the tarball
		}
		return nil
	})
	g.Wait()
	watchErr := watchers.Wait()

	for i, tb := range tbs {
		tb.mu.Lock()
		err, own := tb.err, tb.ownError
		tb.mu.Unlock()
		if own {
			if solveErr != nil && !strings.Contains(solveErr.Error(), err.Error()) && !canceled(solveErr) {
				// The solve failed on its own (a step, another export
				// filling the disk) and cut this tarball short: its
				// reader's error (an unexpected EOF) is the consequence.
				// A reader that fails first cancels the solve, or closes
				// the pipe with its error, which BuildKit then reports.
				return resp, solveErr
			}
			return resp, &ExportError{Type: req.Tarballs[i].Type, Err: err}
		}
	}
	if solveErr != nil {
		return resp, solveErr
	}
	for i, tb := range tbs {
		if !tb.started.Load() {
			return resp, &ExportError{Type: req.Tarballs[i].Type, Err: errors.New("BuildKit did not export the tarball")}
		}
		if tb.err != nil {
			return resp, &ExportError{Type: req.Tarballs[i].Type, Err: tb.err}
		}
	}
	if watchErr != nil {
		return resp, fmt.Errorf("solve: progress: %w", watchErr)
	}
	return resp, nil
}

// readerGrace is how long a solve whose tarball reader failed is left to
// end by itself before it is cancelled.
const readerGrace = 2 * time.Second

// canceled reports whether a solve's error is its cancellation (BuildKit
// reports it through gRPC, where errors.Is does not always see it).
func canceled(err error) bool {
	return errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled")
}

// frontendInputs writes the Dockerfile under tmp and returns the
// dockerfile frontend's attributes (target, build arguments, named
// contexts) and the local folders it reads.
func frontendInputs(req Request, tmp string) (map[string]string, map[string]fsutil.FS, error) {
	dfDir, ctxDir := filepath.Join(tmp, "dockerfile"), filepath.Join(tmp, "context")
	for _, d := range []string{dfDir, ctxDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, fmt.Errorf("solve: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dfDir, "Dockerfile"), req.Dockerfile, 0o644); err != nil {
		return nil, nil, fmt.Errorf("solve: %w", err)
	}
	attrs := map[string]string{"filename": "Dockerfile"}
	if req.Target != "" {
		attrs["target"] = req.Target
	}
	if req.Platform != "" {
		attrs["platform"] = req.Platform
	}
	for k, v := range req.BuildArgs {
		attrs["build-arg:"+k] = v
	}
	for k, v := range req.Attrs {
		attrs[k] = v
	}
	mounts := map[string]fsutil.FS{}
	add := func(name, dir string) error {
		fs, err := fsutil.NewFS(dir)
		if err != nil {
			return fmt.Errorf("solve: context %s (%s): %w", name, dir, err)
		}
		mounts[name] = fs
		return nil
	}
	if err := add("dockerfile", dfDir); err != nil {
		return nil, nil, err
	}
	mainCtx := ctxDir
	for name, dir := range req.Contexts {
		if name == "context" {
			mainCtx = dir
			continue
		}
		if err := add(name, dir); err != nil {
			return nil, nil, err
		}
		attrs["context:"+name] = "local:" + name
	}
	if err := add("context", mainCtx); err != nil {
		return nil, nil, err
	}
	return attrs, mounts, nil
}

// fanOut returns the channel a solve writes its status to and the group
// of watchers, each reading its own copy of every status.
func fanOut(watch []func(chan *bk.SolveStatus) error) (chan *bk.SolveStatus, *errgroup.Group) {
	ch := make(chan *bk.SolveStatus)
	fan := make([]chan *bk.SolveStatus, len(watch))
	watchers := &errgroup.Group{}
	for i, w := range watch {
		fan[i] = make(chan *bk.SolveStatus, 64)
		watchers.Go(func() error { return w(fan[i]) })
	}
	watchers.Go(func() error {
		for s := range ch {
			for _, c := range fan {
				c <- s
			}
		}
		for _, c := range fan {
			close(c)
		}
		return nil
	})
	return ch, watchers
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
