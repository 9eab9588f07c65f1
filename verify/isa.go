package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/machine"
)

// Image labels that say which instructions a binary needs.
const (
	LabelISALevel = "io.redis-variants.isa.level" // v1..v4, or "native"
	LabelISAFlags = "io.redis-variants.isa.flags" // for native: the build CPU's flags, space separated
)

// isaFlags are the /proc/cpuinfo flags that name instructions a compiler may
// emit; for a native build only these are compared (the rest, like
// "hypervisor" or "constant_tsc", say nothing about what a binary can run).
var isaFlags = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`sse sse2 pni ssse3 sse4_1 sse4_2 sse4a popcnt cx16 lahf_lm abm movbe xsave xsaveopt xsavec xsaves
		avx avx2 fma fma4 f16c bmi1 bmi2 adx aes pclmulqdq vpclmulqdq vaes gfni sha_ni rdrand rdseed clflushopt clwb
		3dnowprefetch xop tbm lwp rdpid movdiri movdir64b serialize waitpkg cldemote ptwrite avx_vnni avx_vnni_int8 avx_ne_convert avx_ifma
		avx512f avx512bw avx512cd avx512dq avx512vl avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg avx512_vpopcntdq
		avx512_bf16 avx512_fp16 avx512_vp2intersect avx512er avx512pf amx_tile amx_int8 amx_bf16 clzero mwaitx wbnoinvd enqcmd uintr`) {
		isaFlags[f] = true
	}
}

// ISAGate refuses an image whose labels say it needs instructions the CPU
// (cpuFlags, as /proc/cpuinfo names them) lacks. Images without an ISA
// label (references, older builds) need only the baseline and pass.
func ISAGate(labels map[string]string, cpuFlags []string) error {
	level := strings.TrimSpace(labels[LabelISALevel])
	have := map[string]bool{}
	for _, f := range cpuFlags {
		have[f] = true
	}
	var need []string
	what := ""
	if level == "native" {
		flags := strings.Fields(labels[LabelISAFlags])
		if len(flags) == 0 {
			return fmt.Errorf("ISA gate: image is built with -march=native but has no %s label listing the build CPU's flags, so it cannot be known to run here", LabelISAFlags)
		}
		for _, f := range flags {
			if isaFlags[f] {
				need = append(need, f)
			}
		}
		what = "-march=native (the build CPU's instruction set)"
	} else {
		var err error
		if need, err = machine.LevelFlags(level); err != nil {
			return fmt.Errorf("ISA gate: label %s: %w", LabelISALevel, err)
		}
		what = "x86-64-" + level
	}
	var missing []string
	for _, f := range need {
		if !have[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("ISA gate: the binary needs %s but this CPU lacks %s: refusing to run it here (it would die with SIGILL or, worse, run only some paths)",
		what, strings.Join(displayFlags(missing), ", "))
}

// displayFlags adds the instruction names to cpuinfo's less obvious ones.
func displayFlags(fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		switch f {
		case "abm":
			out[i] = "abm (lzcnt)"
		case "pni":
			out[i] = "pni (sse3)"
		case "lahf_lm":
			out[i] = "lahf_lm (lahf/sahf)"
		default:
			out[i] = f
		}
	}
	return out
}
