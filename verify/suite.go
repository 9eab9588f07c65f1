package verify

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bk "github.com/moby/buildkit/client"

	"github.com/redis-variants/redis-variants/solve"
)

// Suite profiles.
const (
	ProfileQuick = "quick"
	ProfileFull  = "full"
)

// QuickUnits are the units of the quick profile: data types, expiry,
// persistence (RDB, AOF) and replication basics. Measured at about a minute
// with --clients 4 on a 2-core machine.
var QuickUnits = []string{
	"unit/type/string", "unit/type/incr", "unit/type/list", "unit/type/hash", "unit/type/set", "unit/type/zset",
	"unit/expire", "unit/other", "integration/rdb", "integration/aof", "integration/replication-2",
}

// ExternalQuickUnits are the units run against the finished image from
// outside (tests meant for an external server).
var ExternalQuickUnits = []string{"unit/type/string", "unit/type/list", "unit/type/hash"}

// SuiteArgs returns runtest's arguments for a profile; units, when not
// empty, replaces the profile's unit list (full: every unit).
func SuiteArgs(profile string, units []string) ([]string, error) {
	var args []string
	switch profile {
	case ProfileQuick, "":
		args = []string{"--clients", "4", "--timeout", "600", "--tags", "-slow", "--durable"}
		if len(units) == 0 {
			units = QuickUnits
		}
	case ProfileFull:
		args = []string{"--clients", "4", "--timeout", "1200", "--durable"}
	default:
		return nil, fmt.Errorf("unknown test profile %q (want quick or full)", profile)
	}
	for _, u := range units {
		args = append(args, "--single", u)
	}
	return args, nil
}

// RetryArgs returns runtest's arguments to run one test on its own.
func RetryArgs(unit, name string) []string {
	return []string{"--clients", "1", "--timeout", "600", "--durable", "--single", unit, "--only", name}
}

// ShellQuote quotes args for the test stage's `eval "./runtest $TEST_ARGS"`.
func ShellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/.=:,+") == "" {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// Recipe is what the test stage is built from: the rendered Dockerfile
// (main recipe plus dockerfiles/test.Dockerfile), its build args and named
// local contexts (dockerfiles.Recipe, Target aside).
type Recipe struct {
	Dockerfile []byte
	BuildArgs  map[string]string
	Contexts   map[string]string // name -> host folder
	Target     string            // the report stage ("" = SuiteTarget)
	Platform   string            // the image's platform when it is not the builder's (dockerfiles.Recipe.Platform)
}

// Report stages of dockerfiles/test.Dockerfile: the variant's build tree,
// or the official recipe's own.
const (
	SuiteTarget         = "test-report"
	OfficialSuiteTarget = "test-report-official"
)

// SuiteOutput is what one solve of the test stage exported.
type SuiteOutput struct {
	Log      string // runtest's output
	ExitCode int
	Seconds  int           // runtest's wall time inside the build
	Server   string        // sha256 of the src/redis-server the suite ran ("" = not recorded)
	Wall     time.Duration // the whole solve, cache hits included
}

// RunSuite builds the test-report stage of rec with TEST_ARGS=args and
// exports it to a temporary folder: runtest's output and exit status, even
// when tests fail (the RUN never fails). nonce, when set, is passed as
// TEST_NONCE to bypass the cache (retries). logw receives BuildKit's
// progress lines (may be nil).
func RunSuite(ctx context.Context, c *bk.Client, rec Recipe, args []string, nonce string, logw io.Writer) (SuiteOutput, error) {
	start := time.Now()
	var out SuiteOutput
	outDir, err := os.MkdirTemp("", "redis-variants-suite-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(outDir)
	target := rec.Target
	if target == "" {
		target = SuiteTarget
	}
	buildArgs := maps.Clone(rec.BuildArgs)
	if buildArgs == nil {
		buildArgs = map[string]string{}
	}
	buildArgs["TEST_ARGS"] = ShellQuote(args)
	buildArgs["TEST_NONCE"] = nonce
	req := solve.Request{
		Dockerfile: rec.Dockerfile,
		Target:     target,
		Platform:   rec.Platform,
		BuildArgs:  buildArgs,
		Contexts:   rec.Contexts,
		Exports:    []bk.ExportEntry{{Type: bk.ExporterLocal, OutputDir: outDir}},
		Watch:      []func(chan *bk.SolveStatus) error{func(ch chan *bk.SolveStatus) error { printSteps(logw, ch); return nil }},
	}
	if _, err := solve.Run(ctx, c, req); err != nil {
		return out, fmt.Errorf("building the test stage: %w", err)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "runtest.log"))
	if err != nil {
		return out, fmt.Errorf("test report: %w", err)
	}
	out.Log = string(b)
	ec, err := os.ReadFile(filepath.Join(outDir, "exit-code"))
	if err != nil {
		return out, fmt.Errorf("test report: %w", err)
	}
	if out.ExitCode, err = strconv.Atoi(strings.TrimSpace(string(ec))); err != nil {
		return out, fmt.Errorf("test report: exit-code %q: %w", ec, err)
	}
	if s, err := os.ReadFile(filepath.Join(outDir, "seconds")); err == nil {
		out.Seconds, _ = strconv.Atoi(strings.TrimSpace(string(s)))
	}
	if s, err := os.ReadFile(filepath.Join(outDir, "server.sha256")); err == nil {
		out.Server = strings.TrimSpace(string(s))
	}
	out.Wall = time.Since(start)
	return out, nil
}

// ExtractTestTree unpacks runtest and tests/ of a Redis source tarball
// (.tar.gz, one top folder) into dir, for the external run and the test
// index. It returns the tree's root folder.
func ExtractTestTree(tarball, dir string) (string, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return "", fmt.Errorf("unpacking tests: %w", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("unpacking tests from %s: %w", tarball, err)
	}
	tr := tar.NewReader(gz)
	root := filepath.Join(dir, "redis")
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("unpacking tests from %s: %w", tarball, err)
		}
		name := path.Clean(h.Name)
		_, rel, ok := strings.Cut(name, "/")
		if !ok || !(rel == "runtest" || strings.HasPrefix(rel, "tests/")) || strings.Contains(rel, "..") {
			continue
		}
		target := filepath.Join(root, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return "", err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return "", err
			}
			w, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
			if err != nil {
				return "", err
			}
			_, err = io.Copy(w, tr)
			w.Close()
			if err != nil {
				return "", err
			}
			found = found || rel == "runtest"
		}
	}
	if !found {
		return "", fmt.Errorf("unpacking tests from %s: no runtest in the archive (not a Redis source tree?)", tarball)
	}
	return root, nil
}

// printSteps writes each finished step (done, cached or its error) and the
// steps' output to w (nil: drains only).
func printSteps(w io.Writer, ch chan *bk.SolveStatus) {
	printed := map[string]bool{}
	for st := range ch {
		if w == nil {
			continue
		}
		for _, v := range st.Vertexes {
			if v.Completed != nil && !printed[v.Digest.String()] {
				printed[v.Digest.String()] = true
				state := "done"
				if v.Cached {
					state = "cached"
				}
				if v.Error != "" {
					state = "error: " + v.Error
				}
				fmt.Fprintf(w, "#%s %s %s\n", v.Digest.Encoded()[:12], v.Name, state)
			}
		}
		for _, l := range st.Logs {
			w.Write(l.Data)
		}
	}
}
