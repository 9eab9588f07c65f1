package variants

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRuntimeNetworks(t *testing.T) {
	const head = "defaults: {redis: 7.0.15}\nreferences:\n  - {name: r, kind: distro-package}\nruntimes:\n"
	p, err := Parse("test.yaml", []byte(head+"  - {name: host, network: host}\n  - {name: native, network: native}\n  - {name: pod, network: pod, seccomp: unconfined}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{p.Runtimes[1].Network, p.Runtimes[2].Network, p.Runtimes[2].Seccomp}; strings.Join(got, " ") != "native pod unconfined" {
		t.Errorf("runtimes %+v", p.Runtimes)
	}
	for _, c := range []struct{ file, want string }{
		{"  - {name: n, network: native, seccomp: unconfined}\n", "test.yaml:5:41: runtimes[0].seccomp: a native server (network: native) runs without a container: it has no seccomp filter"},
		{"  - {name: n, network: native, cpu_limit: 0.5}\n", "test.yaml:5:43: runtimes[0].cpu_limit: a native server (network: native) runs without a container: a CPU quota needs a cgroup"},
		{"  - {name: n, network: nat}\n", "runtimes[0].network"},
	} {
		_, err := Parse("test.yaml", []byte(head+c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.file, err, c.want)
		}
	}
}

// The experiments' files parse.
func TestExperimentFiles(t *testing.T) {
	files, err := filepath.Glob("../experiments/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiment files: %v", err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestLatencyProfile(t *testing.T) {
	const head = "defaults: {redis: 7.0.15}\nreferences:\n  - {name: r, kind: distro-package}\nprofiles:\n  quick:\n"
	p, err := Parse("test.yaml", []byte(head+"    latency: {test: set, rate: 40%, trials: 6, duration: 2s, images: all}\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := p.Profiles["quick"].Latency
	if l == nil || l.Test != "SET" || l.Share != 0.4 || l.Rate != 0 || l.Trials != 6 || l.Duration.String() != "2s" || l.Images != LatencyAll || l.Clients != 50 {
		t.Fatalf("latency %+v", l)
	}
	p, err = Parse("test.yaml", []byte(head+"    latency: {rate: 20000}\n"))
	if err != nil || p.Profiles["quick"].Latency.Rate != 20000 || p.Profiles["quick"].Latency.Share != 0 {
		t.Fatalf("rate 20000: %+v %v", p.Profiles["quick"].Latency, err)
	}
	if p, err := Parse("test.yaml", []byte(head+"    trials: 1\n")); err != nil || p.Profiles["quick"].Latency != nil {
		t.Errorf("no latency section: %v %v", p.Profiles["quick"].Latency, err)
	}
	for _, c := range []struct{ file, want string }{
		{"    latency: {rate: 150%}\n", "test.yaml:6:21: profiles.quick.latency.rate"},
		{"    latency: {rate: fast}\n", "profiles.quick.latency.rate: \"fast\""},
		{"    latency: {test: GTE}\n", "profiles.quick.latency.test: unknown test \"GTE\""},
		{"    latency: {trials: 1}\n", "profiles.quick.latency.trials: 1: want at least 2"},
		{"    latency: {images: some}\n", "profiles.quick.latency.images"},
		{"    latency: {pace: 1}\n", "profiles.quick.latency.pace"},
	} {
		_, err := Parse("test.yaml", []byte(head+c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.file, err, c.want)
		}
	}
}
