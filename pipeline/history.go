package pipeline

import (
	"bytes"
	"fmt"

	"github.com/redis-variants/redis-variants/history"
	"github.com/redis-variants/redis-variants/results"
)

// HistoryOptions are the flags of `redis-variants history`.
type HistoryOptions struct {
	By        string
	Runtime   string
	Reference string
	HTML      string
	CSV       string
	NoRuns    bool
}

// History merges the rankings of the run folders dirs (and, unless
// o.NoRuns, every run under c.Runs, and c.RunDir) into one table per CPU
// model: Markdown (or CSV with o.CSV "-") on c.Out, and the CSV and HTML
// files o asks for.
func History(c Config, o HistoryOptions, args []string) error {
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
	if len(dirs) == 0 {
		return fmt.Errorf("no run folders under %s and none given", c.Runs)
	}
	opt := history.Options{Runtime: o.Runtime, Reference: o.Reference, By: o.By}
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
