package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// buildResult is the part of builder.Result (builds/<name>.json) that bench
// reads. Read here rather than through the builder package so bench does
// not depend on the build stage's code.
type buildResult struct {
	Variant variants.Variant `json:"variant"`
	Image   string           `json:"image"`
	Status  string           `json:"status"`
	Error   string           `json:"error,omitempty"`
}

// verifyStatus is the part of verify.Report (verify/<name>.json) bench reads.
type verifyStatus struct {
	Status string `json:"status"`
}

// Images returns the images of a run folder's successful builds, with their
// verify status, sorted by name. only, when not empty, keeps those names
// (an unknown name is an error). Builds that did not succeed are reported
// as warnings.
func Images(run *results.Run, only []string) ([]Image, []string, error) {
	files, err := filepath.Glob(run.Path("builds", "*.json"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no build results in %s: run `redis-variants build` first", run.Path("builds"))
	}
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	var imgs []Image
	var warnings []string
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), ".") {
			continue
		}
		var b buildResult
		if err := run.ReadJSON(filepath.Join("builds", filepath.Base(f)), &b); err != nil {
			return nil, nil, err
		}
		name := b.Variant.Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		seen[name] = true
		if len(want) > 0 && !want[name] {
			continue
		}
		if b.Status != "ok" {
			warnings = append(warnings, fmt.Sprintf("skipping %s: build %s %s", name, b.Status, b.Error))
			continue
		}
		if b.Image == "" {
			warnings = append(warnings, fmt.Sprintf("skipping %s: its build result names no image", name))
			continue
		}
		im := Image{Name: name, ID: b.Variant.ID, Ref: b.Image, Reference: b.Variant.IsReference()}
		var v verifyStatus
		switch err := run.ReadJSON(filepath.Join("verify", name+".json"), &v); {
		case err == nil:
			im.Verified = v.Status
		case errors.Is(err, os.ErrNotExist):
		default:
			return nil, nil, err
		}
		imgs = append(imgs, im)
	}
	for _, n := range only {
		if !seen[n] {
			return nil, nil, fmt.Errorf("--only %s: no build result with that name in %s", n, run.Path("builds"))
		}
	}
	sort.Slice(imgs, func(i, j int) bool { return imgs[i].Name < imgs[j].Name })
	return imgs, warnings, nil
}

// SelectRuntimes returns the runtimes of plan named in names (all when
// names is empty); an unknown name is an error.
func SelectRuntimes(all []variants.Runtime, names []string) ([]variants.Runtime, error) {
	if len(names) == 0 {
		return all, nil
	}
	by := map[string]variants.Runtime{}
	var known []string
	for _, rt := range all {
		by[rt.Name] = rt
		known = append(known, rt.Name)
	}
	var out []variants.Runtime
	for _, n := range names {
		rt, ok := by[n]
		if !ok {
			return nil, fmt.Errorf("--runtime %s: no such runtime (have %s)", n, strings.Join(known, ", "))
		}
		out = append(out, rt)
	}
	return out, nil
}
