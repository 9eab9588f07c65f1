package verify

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParseRuntest feeds the runtest output parser arbitrary output. It
// must not panic; it invents nothing (every test name and unit it reports
// is text of the output, but for its two placeholders); every test has a
// status it knows; the resolver is asked only to choose among two or more
// running units, and what it chooses is what is recorded; and reading the
// output twice gives the same answer. The seeds are the short runtest logs
// in testdata (real output of Redis 7.0's suite); `make fuzz` runs it.
func FuzzParseRuntest(f *testing.F) {
	logs, _ := filepath.Glob("testdata/runtest-*.log")
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 16<<10 {
			continue // a whole suite's log slows every mutation; the unit tests read it
		}
		f.Add(string(b))
	}
	f.Add("Testing unit/a\nTesting unit/b\n[ok]: x (1 ms)\n[1/2 done]: unit/a (1 seconds)\n[err]: y in tests/unit/b.tcl\nExpected 1\n")
	f.Add("[exception]: Executing test client: boom\n    \"test {t} {\n(file \"tests/unit/x.tcl\" line 3)\nKilling still running Redis server 12\n")
	f.Add("\x1b[32m[ok]\x1b[0m: coloured (3 ms)\r\n[ignore]: z: Tag: slow denied\n[TIMEOUT]: clients state report follows.\n\\o/ All tests passed without errors!\nThe End\n")
	known := []string{TestOK, TestErr, TestException, TestSkipped, TestIgnored}
	f.Fuzz(func(t *testing.T, output string) {
		text := ansiRe.ReplaceAllString(output, "")
		var asked int
		resolve := func(test string, candidates []string) string {
			asked++
			if len(candidates) < 2 {
				t.Fatalf("asked to resolve %q among %v", test, candidates)
			}
			for _, c := range candidates {
				if !strings.Contains(text, c) {
					t.Fatalf("candidate unit %q is not in the output", c)
				}
			}
			return candidates[len(candidates)-1]
		}
		p := ParseRuntest(output, resolve)
		for _, r := range p.Tests {
			if !slices.Contains(known, r.Status) {
				t.Fatalf("test %q has status %q", r.Name, r.Status)
			}
			if r.Name != "(test client)" && r.Name != "(server block)" && !strings.Contains(text, r.Name) {
				t.Fatalf("test name %q is not in the output", r.Name)
			}
			if r.Unit != "" && !strings.Contains(text, r.Unit) {
				t.Fatalf("unit %q of %q is not in the output", r.Unit, r.Name)
			}
			if r.Duration < 0 {
				t.Fatalf("test %q lasted %v", r.Name, r.Duration)
			}
		}
		for _, u := range p.Units {
			if !strings.Contains(text, u.Name) || u.Duration < 0 {
				t.Fatalf("unit %+v", u)
			}
		}
		if n := strings.Count(output, "\n") + 1; len(p.Tests)+len(p.Units) > n {
			t.Fatalf("%d tests and %d units from %d lines", len(p.Tests), len(p.Units), n)
		}
		again := ParseRuntest(output, func(_ string, c []string) string { return c[len(c)-1] })
		if len(again.Tests) != len(p.Tests) || len(again.Units) != len(p.Units) || again.AllPassed != p.AllPassed || again.TheEnd != p.TheEnd {
			t.Fatalf("parsed twice: %d/%d tests, %d/%d units", len(p.Tests), len(again.Tests), len(p.Units), len(again.Units))
		}
		for i := range p.Tests {
			if p.Tests[i] != again.Tests[i] {
				t.Fatalf("parsed twice: %+v then %+v", p.Tests[i], again.Tests[i])
			}
		}
	})
}
