package main

import (
	"bytes"
	"slices"
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
