package pipeline

import (
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// TestRunOnlyKeepsTheReferences: run --only picks variants, and every
// reference comes along (a run of one variant without them had no pair to
// measure and ranked nothing); a reference named in --only is not named
// twice.
func TestRunOnlyKeepsTheReferences(t *testing.T) {
	plan, err := variants.Load("../variants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := withReferences([]string{"gcc-o3-native", "official"}, plan)
	if want := "gcc-o3-native official stock-debian official-alpine"; strings.Join(got, " ") != want {
		t.Fatalf("--only gcc-o3-native,official gives %v, want %s", got, want)
	}
}
