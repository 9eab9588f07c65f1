package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestCIExamples parses the CI example files and every redis-variants
// command line in them with the tool's own commands and flags, once for
// each value of the CI system's own shard matrix: an example that names a
// flag the tool lost, or a shard the tool refuses, fails here.
func TestCIExamples(t *testing.T) {
	for _, c := range []struct {
		file   string
		matrix func(*testing.T, *yaml.Node) []string // the shard matrix the file declares
	}{
		{"github-actions.yml", githubShards},
		{"gitlab-ci.yml", gitlabShards},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "examples", "ci", c.file))
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			shards := c.matrix(t, &doc)
			if len(shards) < 2 {
				t.Fatalf("%s: shard matrix %v, want two shards or more", c.file, shards)
			}
			lines := commandLines(&doc)
			var ran []string
			for _, line := range lines {
				for _, shard := range shards {
					args := expand(t, line, shard)
					checkArgs(t, c.file, args)
					ran = append(ran, args[0])
				}
			}
			for _, want := range []string{"run", "history", "gate"} {
				found := false
				for _, r := range ran {
					found = found || r == want
				}
				if !found {
					t.Errorf("%s runs no `redis-variants %s`", c.file, want)
				}
			}
		})
	}
}

// commandLines are the redis-variants invocations in every string of doc
// (run: and script: entries), without the binary's path and anything
// after a pipe or redirection.
func commandLines(n *yaml.Node) [][]string {
	var out [][]string
	if n.Kind == yaml.ScalarNode {
		for _, line := range strings.Split(n.Value, "\n") {
			f := strings.Fields(githubExpr.ReplaceAllString(line, "$${{$1}}"))
			for i, w := range f {
				if filepath.Base(w) != "redis-variants" || i > 0 && !strings.HasSuffix(f[i-1], "&&") {
					continue
				}
				var args []string
				for _, a := range f[i+1:] {
					if a == "|" || a == ">" || a == ">>" || a == "&&" {
						break
					}
					args = append(args, a)
				}
				if len(args) > 0 { // a bare name (name: redis-variants) runs nothing
					out = append(out, args)
				}
			}
		}
	}
	for _, c := range n.Content {
		out = append(out, commandLines(c)...)
	}
	return out
}

var (
	// githubExpr is a GitHub expression, written without its spaces
	// before a line is split into words
	githubExpr  = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	placeholder = regexp.MustCompile(`\$\{\{matrix\.shard\}\}|\$SHARD|\$\{SHARD\}`)
)

// expand puts a shard's value and a registry into a command line's
// variables; any other variable is an error, as the test cannot check it.
func expand(t *testing.T, args []string, shard string) []string {
	t.Helper()
	out := make([]string, len(args))
	for i, a := range args {
		a = placeholder.ReplaceAllString(a, shard)
		a = strings.ReplaceAll(a, "$REGISTRY", "registry.example.com")
		if strings.Contains(a, "$") {
			t.Errorf("command line %q: %q has a variable the test does not know", strings.Join(args, " "), a)
		}
		out[i] = strings.Trim(a, `"'`)
	}
	return out
}

// checkArgs parses args as the tool would, without running the command.
func checkArgs(t *testing.T, file string, args []string) {
	t.Helper()
	root := newRoot()
	cmd, rest, err := root.Find(args)
	if err != nil || cmd == root {
		t.Errorf("%s: `redis-variants %s`: no such command (%v)", file, strings.Join(args, " "), err)
		return
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: `redis-variants %s`: %v", file, strings.Join(args, " "), err)
		return
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		t.Errorf("%s: `redis-variants %s`: %v", file, strings.Join(args, " "), err)
	}
	if root.PersistentPreRunE != nil {
		if err := root.PersistentPreRunE(cmd, cmd.Flags().Args()); err != nil {
			t.Errorf("%s: `redis-variants %s`: %v", file, strings.Join(args, " "), err)
		}
	}
}

// githubShards is the shard job's strategy.matrix.shard.
func githubShards(t *testing.T, doc *yaml.Node) []string {
	var f struct {
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Shard []string `yaml:"shard"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
		} `yaml:"jobs"`
	}
	if err := doc.Decode(&f); err != nil {
		t.Fatal(err)
	}
	return f.Jobs["shard"].Strategy.Matrix.Shard
}

// gitlabShards is the SHARD values of the jobs' parallel:matrix.
func gitlabShards(t *testing.T, doc *yaml.Node) []string {
	var top map[string]yaml.Node
	if err := doc.Decode(&top); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range top {
		if n.Kind != yaml.MappingNode {
			continue // stages:, the anchored command list
		}
		var job struct {
			Parallel struct {
				Matrix []map[string][]string `yaml:"matrix"`
			} `yaml:"parallel"`
		}
		if err := n.Decode(&job); err != nil {
			t.Fatal(err)
		}
		for _, m := range job.Parallel.Matrix {
			out = append(out, m["SHARD"]...)
		}
	}
	return out
}
