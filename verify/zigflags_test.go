package verify

import (
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// A shortened line recorded by zig cc 0.11 for -O3 -march=native, as read
// from a real zig-o3-native image.
const zigNativeLine = "/opt/zig/zig adlist.c --no-default-config --target=x86_64-unknown-linux-gnu " +
	"-Xclang -target-cpu -Xclang x86-64 -Xclang -target-feature -Xclang -3dnow -Xclang -target-feature -Xclang +avx2 " +
	"-Xclang -target-feature -Xclang +avx512f -Xclang -target-feature -Xclang +sse4.2 -O2 -std=c11"

const zigBaselineLine = "/opt/zig/zig adlist.c --target=x86_64-unknown-linux-gnu " +
	"-Xclang -target-cpu -Xclang x86-64 -Xclang -target-feature -Xclang +sse2 -O2 -std=c11"

func TestZigNativeIsReadFromTargetFeatures(t *testing.T) {
	f := ParseFlags(zigNativeLine)
	if f.TargetCPU != "x86-64" || len(f.Features) != 3 || f.Features[0] != "avx2" {
		t.Fatalf("parsed %q %v", f.TargetCPU, f.Features)
	}
	v := variants.Variant{Compiler: variants.Compiler{Family: "zig", Version: "0.11.0"}, Opt: "O3", March: "native", Mtune: "native", LTO: "off"}
	checks := FlagChecks(&BinaryInfo{CommandLines: []string{zigNativeLine}}, v)
	got := map[string]Check{}
	for _, c := range checks {
		got[c.Name] = c
	}
	if c := got["binary -march"]; !c.OK || !strings.Contains(c.Detail, "avx2: true") {
		t.Errorf("-march native with the host's features: %+v", c)
	}
	if c := got["binary -O level"]; c.OK {
		t.Errorf("zig's -O2 for a -O3 spec must stay a mismatch: %+v", c)
	}
	// A baseline build does not pass for native.
	checks = FlagChecks(&BinaryInfo{CommandLines: []string{zigBaselineLine}}, v)
	for _, c := range checks {
		if c.Name == "binary -march" && c.OK {
			t.Errorf("a baseline zig build passed as native: %+v", c)
		}
	}
}
