package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/publish"

	"github.com/redis-variants/redis-variants/history"
	"github.com/redis-variants/redis-variants/results"
)

// HistoryOptions are the flags of `redis-variants history`.
type HistoryOptions struct {
	By        string
	Metric    string // history.MetricSpeed ("") or history.MetricMemory
	Runtime   string
	Reference string
	HTML      string
	CSV       string
	NoRuns    bool
	From      []string // registry repositories whose results artifacts are merged too
	Insecure  bool     // plain HTTP for a registry that is not local
	// Merge merges the latest run of each shard of a sharded file (runs
	// made with --shard i/n, read here or from --from) into one ranking
	// with a random run effect, instead of the table per CPU model.
	Merge bool
}

// History merges the rankings of the run folders dirs (and, unless
// o.NoRuns, every run under c.Runs, and c.RunDir) into one table per CPU
// model: Markdown (or CSV with o.CSV "-") on c.Out, and the CSV and HTML
// files o asks for.
func History(ctx context.Context, c Config, o HistoryOptions, args []string) error {
	var dirs []string
	if !o.NoRuns {
		found, err := history.RunDirs(c.Runs)
		if err != nil {
			return fmt.Errorf("listing runs under %s: %w", c.Runs, err)
		}
		dirs = found
	}
	dirs = append(dirs, args...)
	if c.RunDir != "" {
		dirs = append(dirs, c.RunDir)
	}
	if len(o.From) > 0 {
		tmp, err := os.MkdirTemp("", "redis-variants-history-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		pulled, err := pullAll(ctx, c, o.From, o.Insecure, tmp, dirs)
		if err != nil {
			return err
		}
		dirs = append(dirs, pulled...)
	}
	if len(dirs) == 0 {
		return fmt.Errorf("no run folders under %s and none given", c.Runs)
	}
	if o.Merge {
		return mergeShards(c, dirs, o.Runtime)
	}
	opt := history.Options{Runtime: o.Runtime, Reference: o.Reference, By: o.By, Metric: o.Metric}
	rs, warnings, err := history.Load(dirs, opt)
	for _, w := range warnings {
		fmt.Fprintf(c.Err, "warning: %s\n", w)
	}
	if err != nil {
		return err
	}
	t, err := history.Build(rs, opt)
	if err != nil {
		return err
	}
	out := c.Out
	if o.CSV == "-" {
		return t.CSV(out)
	}
	if err := t.Markdown(out); err != nil {
		return err
	}
	if o.CSV != "" {
		var b bytes.Buffer
		if err := t.CSV(&b); err != nil {
			return err
		}
		if err := results.WriteFile(o.CSV, b.Bytes()); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		var b bytes.Buffer
		if err := t.HTML(&b); err != nil {
			return err
		}
		if err := results.WriteFile(o.HTML, b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(c.Err, "wrote %s\n", o.HTML)
	}
	return nil
}

// pullAll pulls every results artifact in the repositories from into
// folders under tmp, and returns them; a run already among local (by its
// folder's name, the run ID) is not pulled again: the local folder is the
// same run.
func pullAll(ctx context.Context, c Config, from []string, insecure bool, tmp string, local []string) ([]string, error) {
	have := map[string]bool{}
	for _, d := range local {
		have[filepath.Base(filepath.Clean(d))] = true
	}
	var dirs []string
	for _, r := range from {
		reg, name, err := splitRepo(r)
		if err != nil {
			return nil, err
		}
		repo, err := publish.RepoName(reg, name, insecure)
		if err != nil {
			return nil, err
		}
		found, warnings, err := artifact.List(ctx, repo, publish.ReadOptions(ctx)...)
		for _, w := range warnings {
			fmt.Fprintf(c.Err, "warning: %s\n", w)
		}
		if err != nil {
			return nil, err
		}
		n := 0
		for _, a := range found {
			if have[a.Run()] {
				continue
			}
			have[a.Run()] = true
			run, err := a.Pull(ctx, filepath.Join(tmp, a.Run()), publish.ReadOptions(ctx)...)
			if err != nil {
				return nil, err
			}
			dirs = append(dirs, run.Dir)
			n++
		}
		fmt.Fprintf(c.Err, "history: %d results artifact(s) in %s, %d run(s) pulled\n", len(found), repo, n)
	}
	return dirs, nil
}

// splitRepo splits REGISTRY/REPO at its first slash (after any scheme).
func splitRepo(s string) (registry, repo string, err error) {
	scheme := ""
	for _, p := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			scheme, s = p, rest
		}
	}
	reg, repo, _ := strings.Cut(s, "/")
	if reg == "" || repo == "" {
		return "", "", fmt.Errorf("--from %q: want REGISTRY/REPOSITORY, e.g. 127.0.0.1:5000/redis-variants", s)
	}
	return scheme + reg, repo, nil
}

// mergeShards prints the runners of a sharded file's latest shards and
// their rankings merged with a random run effect: every shard ran the
// references, so the references measure how far the runners differ (the
// run effect), and each variant's merged interval is widened by it.
func mergeShards(c Config, dirs []string, rt string) error {
	picked, warnings, err := pickShards(dirs)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(c.Err, "warning: %s\n", w)
	}
	if len(picked) < 2 {
		return fmt.Errorf("history --merge: %d shard run found, two or more are merged", len(picked))
	}
	runs, err := loadRuns(picked)
	if err != nil {
		return err
	}
	writeRunners(c.Out, picked, runs, rt)
	return writeComparison(c.Out, runs, rt, false)
}
