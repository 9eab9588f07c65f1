package machine

import (
	"reflect"
	"strings"
	"testing"
)

func TestLevel(t *testing.T) {
	v2 := strings.Fields("fpu sse2 cx16 lahf_lm popcnt pni sse4_1 sse4_2 ssse3")
	v3 := append(append([]string{}, v2...), strings.Fields("avx avx2 bmi1 bmi2 f16c fma movbe xsave")...)
	v4 := append(append([]string{}, v3...), strings.Fields("avx512f avx512bw avx512cd avx512dq avx512vl")...)
	for _, tc := range []struct {
		flags []string
		want  string
	}{{[]string{"sse2"}, "v1"}, {v2, "v2"}, {v3, "v3"}, {v4, "v4"}, {v4[3:], "v1"}} {
		if got := Level(tc.flags); got != tc.want {
			t.Errorf("Level(%v) = %s, want %s", tc.flags, got, tc.want)
		}
	}
	if got, want := Missing("v3", v2), []string{"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "xsave"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Missing(v3, v2 flags) = %v, want %v", got, want)
	}
	if got := Missing("v2", v4); len(got) != 0 {
		t.Errorf("Missing(v2, v4 flags) = %v", got)
	}
}

func TestParseCPUInfo(t *testing.T) {
	text := "processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu sse2 avx2\n\nprocessor\t: 1\nmodel name\t: other\nflags\t: x\n"
	m, f := ParseCPUInfo(text)
	if m != "AMD EPYC 9B14" || !reflect.DeepEqual(f, []string{"fpu", "sse2", "avx2"}) {
		t.Fatalf("got %q %v", m, f)
	}
}

func TestReadThisMachine(t *testing.T) {
	in, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if in.CPUModel == "" || in.Level == "" || in.Kernel == "" || in.CPUs < 1 {
		t.Fatalf("incomplete: %+v", in)
	}
}
