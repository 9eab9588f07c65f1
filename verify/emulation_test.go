package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis-variants/redis-variants/variants"
)

// TestEmulation reads binfmt_misc entries as the kernel writes them: an
// arm64 image needs an enabled qemu-aarch64 entry with the F flag, and
// each way of lacking one is refused with its reason.
func TestEmulation(t *testing.T) {
	arm := variants.Variant{Name: "a", Platform: variants.PlatformARM64}
	entry := "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: POF\noffset 0\nmagic 7f454c46\nmask ffffffff\n"
	for _, tc := range []struct {
		name, content string // content "" = no entry
		ok            bool
		want          string
	}{
		{"registered", entry, true, "binfmt_misc qemu-aarch64, interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P, flags POF"},
		{"none", "", false, "binfmt_misc has no qemu-aarch64 entry"},
		{"disabled", strings.Replace(entry, "enabled", "disabled", 1), false, "entry is disabled"},
		{"no F flag", strings.Replace(entry, "flags: POF", "flags: PO", 1), false, "lacks the F flag"},
	} {
		dir := t.TempDir()
		BinfmtDir = dir
		if tc.content != "" {
			if err := os.WriteFile(filepath.Join(dir, "qemu-aarch64"), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		how, ok := Emulation(arm)
		if ok != tc.ok || !strings.Contains(how, tc.want) {
			t.Errorf("%s: Emulation = %q, %v; want %v and %q", tc.name, how, ok, tc.ok, tc.want)
		}
		// the machine's own platform needs nothing, whatever binfmt_misc holds
		if how, ok := Emulation(variants.Variant{Name: "b"}); !ok || how != "" {
			t.Errorf("%s: amd64 variant: %q, %v", tc.name, how, ok)
		}
	}
	BinfmtDir = "/proc/sys/fs/binfmt_misc"
}

func TestArchAndMcpuChecks(t *testing.T) {
	arm := variants.Variant{Name: "a", Kind: variants.KindVariant, Platform: variants.PlatformARM64, Mcpu: "neoverse-n1", Opt: "O2",
		Compiler: variants.Compiler{Family: "gcc", Version: "12"}}
	line := "GNU C11 12.2.0 -mcpu=neoverse-n1 -mlittle-endian -mabi=lp64 -g -ggdb -O2 -std=c11"
	b := &BinaryInfo{Machine: "EM_AARCH64", CommandLines: []string{line}}
	if c := ArchCheck(b, arm); !c.OK {
		t.Errorf("aarch64 binary of an arm64 variant: %+v", c)
	}
	if c := ArchCheck(&BinaryInfo{Machine: "EM_X86_64"}, arm); c.OK || !strings.Contains(c.Detail, "wants EM_AARCH64; the binary is EM_X86_64") {
		t.Errorf("x86-64 binary of an arm64 variant: %+v", c)
	}
	if c := ArchCheck(&BinaryInfo{Machine: "EM_AARCH64"}, variants.Variant{}); c.OK {
		t.Errorf("aarch64 binary of an amd64 variant passed: %+v", c)
	}
	find := func(cs []Check, name string) *Check {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
		return nil
	}
	if c := find(FlagChecks(b, arm), "binary -mcpu"); c == nil || !c.OK {
		t.Errorf("-mcpu recorded as the spec asks: %+v", c)
	}
	other := arm
	other.Mcpu = "neoverse-v1"
	if c := find(FlagChecks(b, other), "binary -mcpu"); c == nil || c.OK {
		t.Errorf("-mcpu=neoverse-n1 recorded, spec neoverse-v1: %+v", c)
	}
	if c := find(FlagChecks(&BinaryInfo{CommandLines: []string{"GNU C11 12.2.0 -mtune=generic -march=x86-64 -O2 -std=c11"}}, variants.Variant{Opt: "O2"}), "binary -mcpu"); c != nil {
		t.Errorf("an amd64 variant got a -mcpu check: %+v", c)
	}
}

func TestKnownForPlatform(t *testing.T) {
	k, err := LoadKnown("7.0.15")
	if err != nil {
		t.Fatal(err)
	}
	const title = "Process title set as expected"
	if k.ForPlatform(variants.PlatformAMD64).Match("unit/other", title, "jemalloc", "gcc") != nil {
		t.Error("the emulation-only known failure applies to amd64 images")
	}
	if k.ForPlatform(variants.PlatformARM64).Match("unit/other", title, "jemalloc", "gcc") == nil {
		t.Error("the emulation-only known failure does not apply to arm64 images")
	}
	if k.ForPlatform(variants.PlatformARM64).Match("unit/memefficiency", "Active defrag big keys", "jemalloc", "gcc") == nil {
		t.Error("entries for every platform were dropped")
	}
}
