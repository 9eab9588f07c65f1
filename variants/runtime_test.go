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
		p, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if p.Experiment == nil || p.Experiment.Title == "" || len(p.Experiment.Claims) == 0 {
			t.Errorf("%s: no experiment section with claims: %+v", f, p.Experiment)
		}
	}
}

func TestExperimentClaims(t *testing.T) {
	const head = `defaults: {redis: 7.0.15}
references:
  - {name: stock, kind: distro-package}
variants:
  - {name: fast, compiler: gcc, opt: O3}
runtimes:
  - {name: host, network: host}
  - {name: bare, network: native}
experiment:
  number: 4
  title: the cost of a container
  claims:
`
	p, err := Parse("test.yaml", []byte(head+`    - {label: container, published: "2x", published_ratio: 2x, compare: [host, bare], test: get, pipeline: 16}
    - {label: build, published: "+4.4%", published_ratio: 1.044, compare: [fast, stock], runtime: bare}
    - {label: tail, published: "23.6 vs 16.2 us", measure: p99.9, compare: [host, bare], image: fast}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := p.Experiment
	if e == nil || e.Number != 4 || len(e.Claims) != 3 {
		t.Fatalf("experiment %+v", e)
	}
	c := e.Claims
	if !c[0].Runtimes || c[0].A != "host" || c[0].B != "bare" || c[0].Ratio != 2 || c[0].Test != "GET" || c[0].Pipeline != 16 || c[0].Measure != MeasureThroughput || c[0].Pos.Line != 13 {
		t.Errorf("claim 0 %+v", c[0])
	}
	if c[1].Runtimes || c[1].A != "fast" || c[1].Runtime != "bare" || c[1].Ratio != 1.044 {
		t.Errorf("claim 1 %+v", c[1])
	}
	if !c[2].Runtimes || c[2].Measure != "p99.9" || c[2].Image != "fast" || c[2].Ratio != 0 {
		t.Errorf("claim 2 %+v", c[2])
	}
	for _, tc := range []struct{ claim, want string }{
		{"    - {label: x, published: y, compare: [host, nowhere]}\n", `test.yaml:13:48: experiment.claims[0].compare[1]: "nowhere" is neither a runtime nor an image`},
		{"    - {label: x, published: y, compare: [host, fast]}\n", "experiment.claims[0].compare: compare names two runtimes or two images, not one of each"},
		{"    - {label: x, published: y, compare: [fast, stock], measure: p50}\n", "a latency claim (measure p50) compares runtimes"},
		{"    - {label: x, published: y, compare: [host, bare], measure: p90}\n", `experiment.claims[0].measure: unknown value "p90"`},
		{"    - {label: x, published: y, compare: [host]}\n", "compare names two runtimes or two images, A over B; got 1"},
		{"    - {label: x, published: y, compare: [host, bare], published_ratio: -1}\n", "experiment.claims[0].published_ratio"},
		{"    - {label: x, published: y, compare: [host, bare], runtime: host}\n", "give the image they run (image:)"},
		{"    - {label: x, published: y, compare: [host, bare], image: nope}\n", `unknown image "nope"`},
		{"    - {label: x, compare: [host, bare]}\n", "test.yaml:13:7: experiment.claims[0].published: a claim needs published"},
		{"    - {label: x, published: y, compare: [host, bare], pipeline: 4}\n", "a pipeline names one benchmark"},
		{"    - {label: x, published: y, compare: [host, bare], why: 1}\n", "experiment.claims[0].why"},
	} {
		_, err := Parse("test.yaml", []byte(head+tc.claim))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.claim, err, tc.want)
		}
	}
	if _, err := Parse("test.yaml", []byte(strings.Replace(head, "  title: the cost of a container\n", "", 1)+"    - {label: x, published: y, compare: [host, bare]}\n")); err == nil || !strings.Contains(err.Error(), "experiment.title: an experiment needs a title") {
		t.Errorf("no title: %v", err)
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
