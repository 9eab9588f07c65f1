// Package doctor checks every real part the tool needs (Docker Engine,
// buildkitd, the registry, base images through BuildKit, the source cache,
// the machine) and says, for each failure, how to fix it.
package doctor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/distribution/reference"
	bk "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"golang.org/x/sync/errgroup"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/solve"
	"github.com/redis-variants/redis-variants/sources"
	"github.com/redis-variants/redis-variants/variants"
)

// Check is one line of the doctor's table.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Required checks failing mean the main job cannot run.
	Required bool `json:"required"`
}

// Options say what to check.
type Options struct {
	Registry   string   // host:port of the local registry
	BuildKit   string   // buildkitd address ("" = solve.DefaultAddress)
	BaseImages []string // e.g. debian:bookworm-slim
	Plan       *variants.Plan
	SourcesDir string
	StateDir   string
	MinFreeMB  uint64
}

const setupFix = "run: make setup (or bash scripts/setup.sh)"

// Run performs every check concurrently and returns them in a fixed order.
func Run(ctx context.Context, o Options) []Check {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var fns []func(context.Context) []Check
	fns = append(fns, dockerCheck, buildkitCheck(o), registryCheck(o), sourcesCheck(o), machineCheck(o))
	out := make([][]Check, len(fns))
	var g errgroup.Group
	for i, f := range fns {
		g.Go(func() error { out[i] = f(ctx); return nil })
	}
	_ = g.Wait()
	var all []Check
	for _, cs := range out {
		all = append(all, cs...)
	}
	return all
}

// Failed counts required checks that failed.
func Failed(cs []Check) int {
	n := 0
	for _, c := range cs {
		if !c.OK && c.Required {
			n++
		}
	}
	return n
}

// Print writes the table.
func Print(w io.Writer, cs []Check) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	for _, c := range cs {
		st := "ok"
		if !c.OK {
			st = "FAIL"
			if !c.Required {
				st = "warn"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, st, c.Detail)
	}
	tw.Flush()
	for _, c := range cs {
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "fix %s: %s\n", c.Name, c.Fix)
		}
	}
}

func dockerCheck(ctx context.Context) []Check {
	c := Check{Name: "docker", Required: true}
	cl, err := engine.New(ctx)
	if err != nil {
		c.Detail, c.Fix = err.Error(), setupFix+"; or set DOCKER_HOST to a reachable Docker Engine"
		return []Check{c}
	}
	defer cl.Close()
	srv, api, err := cl.Version(ctx)
	if err != nil {
		c.Detail, c.Fix = err.Error(), setupFix
		return []Check{c}
	}
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = "unix:///var/run/docker.sock"
	}
	c.OK, c.Detail = true, fmt.Sprintf("Docker Engine %s (API %s) at %s", srv, api, host)
	return []Check{c}
}

func buildkitCheck(o Options) func(context.Context) []Check {
	return func(ctx context.Context) []Check {
		host := o.BuildKit
		if host == "" {
			host = solve.DefaultAddress
		}
		c := Check{Name: "buildkitd", Required: true}
		cl, err := bk.New(ctx, host)
		if err != nil {
			c.Detail, c.Fix = fmt.Sprintf("%s: %v", host, err), setupFix+"; or set BUILDKIT_HOST"
			return []Check{c}
		}
		defer cl.Close()
		info, err := cl.Info(ctx)
		if err != nil {
			c.Detail, c.Fix = fmt.Sprintf("%s: %v", host, err), setupFix+"; or set BUILDKIT_HOST"
			return []Check{c}
		}
		ws, err := cl.ListWorkers(ctx)
		if err != nil || len(ws) == 0 {
			c.Detail, c.Fix = fmt.Sprintf("%s answers (%s) but lists no workers: %v", host, info.BuildkitVersion.Version, err), "start buildkitd with the OCI worker enabled ("+setupFix+")"
			return []Check{c}
		}
		var desc []string
		for _, w := range ws {
			var ps []string
			for _, p := range w.Platforms {
				ps = append(ps, p.OS+"/"+p.Architecture+p.Variant)
			}
			desc = append(desc, fmt.Sprintf("%s worker [%s]", w.Labels["org.mobyproject.buildkit.worker.executor"], strings.Join(ps, ",")))
		}
		c.OK, c.Detail = true, fmt.Sprintf("BuildKit %s at %s: %s", info.BuildkitVersion.Version, host, strings.Join(desc, "; "))
		out := []Check{c}
		for _, img := range o.BaseImages {
			out = append(out, resolveCheck(ctx, cl, img))
		}
		return out
	}
}

// ResolveImage asks buildkitd to resolve ref, as a Dockerfile's FROM would
// (through its registry mirrors), and returns the digest.
func ResolveImage(ctx context.Context, cl *bk.Client, ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("parsing image reference %q: %w", ref, err)
	}
	ref = reference.TagNameOnly(named).String()
	var dgst string
	_, err = cl.Build(ctx, bk.SolveOpt{}, "redis-variants-doctor", func(ctx context.Context, gw gateway.Client) (*gateway.Result, error) {
		_, d, _, err := gw.ResolveImageConfig(ctx, ref, sourceresolver.Opt{ImageOpt: &sourceresolver.ResolveImageOpt{ResolveMode: "default"}})
		if err != nil {
			return nil, err
		}
		dgst = d.String()
		return gateway.NewResult(), nil
	}, nil)
	return dgst, err
}

func resolveCheck(ctx context.Context, cl *bk.Client, img string) Check {
	c := Check{Name: "base " + img, Required: true}
	d, err := ResolveImage(ctx, cl, img)
	if err != nil {
		c.Detail = err.Error()
		c.Fix = "Docker Hub is unreachable and the local stand-in is missing: " + setupFix + " (it seeds debian:*-slim with debootstrap)"
		return c
	}
	c.OK, c.Detail = true, "resolves through BuildKit to "+d
	return c
}

func registryCheck(o Options) func(context.Context) []Check {
	return func(ctx context.Context) []Check {
		c := Check{Name: "registry", Required: true}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+o.Registry+"/v2/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			c.Detail, c.Fix = fmt.Sprintf("%s: %v", o.Registry, err), setupFix+"; or pass --registry HOST:PORT"
			return []Check{c}
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
			c.Detail, c.Fix = fmt.Sprintf("%s answers %s to /v2/: not a registry", o.Registry, resp.Status), "stop what listens there or pass --registry"
			return []Check{c}
		}
		c.OK, c.Detail = true, fmt.Sprintf("OCI distribution API at http://%s (%s)", o.Registry, resp.Header.Get("Docker-Distribution-Api-Version"))
		return []Check{c}
	}
}

func sourcesCheck(o Options) func(context.Context) []Check {
	return func(ctx context.Context) []Check {
		if o.Plan == nil {
			return nil
		}
		cache := sources.New(o.SourcesDir)
		names := make([]string, 0, len(o.Plan.Sources))
		for n := range o.Plan.Sources {
			names = append(names, n)
		}
		sort.Strings(names)
		var out []Check
		for _, n := range names {
			c := Check{Name: "source " + n, Required: true}
			if sum, err := cache.Resolve(o.Plan.Sources[n]); err != nil {
				c.Detail, c.Fix = err.Error(), "run: redis-variants fetch"
			} else {
				c.OK, c.Detail = true, "sha256:"+sum+" verified in "+filepath.Join(o.SourcesDir, "sha256")
			}
			out = append(out, c)
		}
		return out
	}
}

func machineCheck(o Options) func(context.Context) []Check {
	return func(ctx context.Context) []Check {
		in, err := machine.Read()
		if err != nil {
			return []Check{{Name: "cpu", Detail: err.Error()}}
		}
		out := []Check{
			{Name: "cpu", OK: true, Detail: fmt.Sprintf("%s, %d CPUs, x86-64-%s", in.CPUModel, in.CPUs, in.Level)},
			{Name: "kernel", OK: true, Detail: in.Kernel},
			{Name: "cgroup", OK: true, Detail: in.Cgroup},
		}
		if in.CPUs < 2 {
			out[0].OK, out[0].Fix = false, "benchmarks pin the server and the generator to different CPUs: use a machine with 2 or more"
		}
		free, err := machine.FreeDiskMB(o.StateDir)
		d := Check{Name: "disk", Required: true}
		switch {
		case err != nil:
			d.Detail = err.Error()
		case free < o.MinFreeMB:
			d.Detail, d.Fix = fmt.Sprintf("%d MB free in %s, need %d MB", free, o.StateDir, o.MinFreeMB), "free disk space (images and BuildKit's cache live in "+o.StateDir+")"
		default:
			d.OK, d.Detail = true, fmt.Sprintf("%d MB free in %s", free, o.StateDir)
		}
		return append(out, d)
	}
}
