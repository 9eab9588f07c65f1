package machine

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// cpuidFlags returns the x86-64 level flags CPUID reports, named as Linux's
// /proc/cpuinfo names them.
func cpuidFlags() []string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	maxID, _, _, _ := cpuid(0, 0)
	_, _, c1, _ := cpuid(1, 0)
	add(c1&(1<<0) != 0, "pni")
	add(c1&(1<<9) != 0, "ssse3")
	add(c1&(1<<12) != 0, "fma")
	add(c1&(1<<13) != 0, "cx16")
	add(c1&(1<<19) != 0, "sse4_1")
	add(c1&(1<<20) != 0, "sse4_2")
	add(c1&(1<<22) != 0, "movbe")
	add(c1&(1<<23) != 0, "popcnt")
	add(c1&(1<<26) != 0, "xsave")
	add(c1&(1<<29) != 0, "f16c")
	// AVX needs the OS to save the YMM (and for AVX-512 the ZMM) state.
	osAVX, osAVX512 := false, false
	if c1&(1<<27) != 0 { // OSXSAVE
		lo, _ := xgetbv()
		osAVX = lo&0x6 == 0x6
		osAVX512 = osAVX && lo&0xe0 == 0xe0
	}
	add(osAVX && c1&(1<<28) != 0, "avx")
	if maxID >= 7 {
		_, b7, _, _ := cpuid(7, 0)
		add(b7&(1<<3) != 0, "bmi1")
		add(osAVX && b7&(1<<5) != 0, "avx2")
		add(b7&(1<<8) != 0, "bmi2")
		add(osAVX512 && b7&(1<<16) != 0, "avx512f")
		add(osAVX512 && b7&(1<<17) != 0, "avx512dq")
		add(osAVX512 && b7&(1<<28) != 0, "avx512cd")
		add(osAVX512 && b7&(1<<30) != 0, "avx512bw")
		add(osAVX512 && b7&(1<<31) != 0, "avx512vl")
	}
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if maxExt >= 0x80000001 {
		_, _, c, _ := cpuid(0x80000001, 0)
		add(c&(1<<0) != 0, "lahf_lm")
		add(c&(1<<5) != 0, "abm")
	}
	return out
}
