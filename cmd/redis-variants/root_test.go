package main

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRootHasEveryCommand(t *testing.T) {
	root := newRoot()
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
	}
	for _, want := range []string{"plan", "fetch", "build", "verify", "bench", "rank", "run", "publish",
		"compare", "history", "loadgen", "doctor", "smoke", "seed-base", "seed-official", "experiments",
		"gate", "sign", "verify-signature", "keygen", "attestations"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %q command; have %v", want, names)
		}
	}
	// A second root is independent: commands are built, not registered.
	var out bytes.Buffer
	other := newRoot()
	other.SetOut(&out)
	other.SetArgs([]string{"--buildkit", "unix:///x.sock", "help"})
	if err := other.Execute(); err != nil || out.Len() == 0 {
		t.Fatalf("help: %v, %q", err, out.String())
	}
}

// TestHelpGroupsAndVersion: --help lists every command a user runs under
// its group and hides the plumbing; --version prints the tool's version;
// every command is in one group or hidden, never in two.
func TestHelpGroupsAndVersion(t *testing.T) {
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, gr := range commandGroups {
		if !strings.Contains(help, gr.title) {
			t.Errorf("--help has no group %q", gr.title)
		}
	}
	for _, hidden := range []string{"fetch", "smoke", "profiles", "seed-base", "seed-official"} {
		if regexp.MustCompile(`(?m)^  ` + hidden + ` `).MatchString(help) {
			t.Errorf("--help lists the plumbing command %s", hidden)
		}
	}
	seen := map[string]string{}
	for _, gr := range commandGroups {
		for _, c := range gr.commands {
			if g, ok := seen[c]; ok {
				t.Errorf("%s is in groups %s and %s", c, g, gr.id)
			}
			seen[c] = gr.id
		}
	}
	for _, c := range root.Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if seen[c.Name()] == "" && !c.Hidden {
			t.Errorf("%s is in no group and not hidden", c.Name())
		}
	}
	out.Reset()
	root = newRoot()
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil || !strings.HasPrefix(out.String(), "redis-variants ") || !strings.Contains(out.String(), "go1.") {
		t.Errorf("--version: %q, %v", out.String(), err)
	}
}

// TestDeprecatedSpellings: the old flag spellings still set what the new
// ones set, say once which to use instead, and are left out of --help.
func TestDeprecatedSpellings(t *testing.T) {
	for _, c := range []struct {
		args      []string
		now, want string
	}{
		{[]string{"run", "--push", "reg.example:5000"}, "to", "reg.example:5000"},
		{[]string{"run", "--verify-profile", "full"}, "suite", "full"},
		{[]string{"experiments", "run", "--push", "reg.example:5000"}, "to", "reg.example:5000"},
		{[]string{"verify", "--profile", "full"}, "suite", "full"},
	} {
		root := newRoot()
		var stderr, stdout bytes.Buffer
		root.SetErr(&stderr)
		root.SetOut(&stdout)
		root.SetArgs(append(c.args, "--help")) // parses the flags, runs nothing
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		cmd, _, _ := root.Find(c.args)
		old := c.args[len(c.args)-2]
		if got := cmd.Flags().Lookup(c.now).Value.String(); got != c.want {
			t.Errorf("%v: --%s is %q, want %q", c.args, c.now, got, c.want)
		}
		if n := strings.Count(stderr.String()+stdout.String(), "has been deprecated, use --"+c.now); n != 1 {
			t.Errorf("%v: the deprecation said %d times: %q", c.args, n, stderr.String())
		}
		if strings.Contains(stdout.String(), "  "+old+" ") {
			t.Errorf("%v: --help lists %s", c.args, old)
		}
	}
}
