package verify

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The lines runtest (Redis 7.0 tests/test_helper.tcl, read_from_test_client)
// prints, colours stripped:
//
//	Testing unit/type/string                      a unit handed to a client
//	[ok]: SET and GET an item (1 ms)              a passing test, with its duration
//	[err]: NAME in tests/unit/type/string.tcl     a failing test; the following lines are the assertion (and, with --durable, the Tcl stack)
//	[exception]: Executing test client: ...       the test client died; runtest kills everything and exits 1
//	[skip]: NAME                                  skipped by --only/--skiptest
//	[ignore]: NAME: Tag: slow denied              skipped by tags or mode
//	[3/11 done]: unit/type/string (4 seconds)     a unit finished
//	[TIMEOUT]: clients state report follows.      no progress for --timeout seconds
//	Killing still running Redis server 1234
//	*** [err]: ...                                the summary of failures at the end (ignored: already counted)
var (
	ansiRe    = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	statusRe  = regexp.MustCompile(`^\[(ok|err|exception|skip|ignore)\]: (.*)$`)
	okRe      = regexp.MustCompile(`^(.*) \((\d+) ms\)$`)
	doneRe    = regexp.MustCompile(`^\[(\d+)/(\d+) done\]: (\S+) \((\d+) seconds\)$`)
	testingRe = regexp.MustCompile(`^Testing (\S+)$`)
	errInRe   = regexp.MustCompile(`^(.*) in tests/(\S+)\.tcl$`)
	excTestRe = regexp.MustCompile(`(?m)^\s*"test (?:\{([^}\n]*)\}|"([^"\n]*)")`)
	excFileRe = regexp.MustCompile(`\(file "tests/(\S+)\.tcl" line \d+\)`)
)

// Parsed is what runtest's output says, before the known-failures list and
// retries are applied.
type Parsed struct {
	Tests      []TestResult
	Units      []Unit
	Timeout    bool     // [TIMEOUT]: no progress for --timeout seconds
	Killed     []string // "Killing still running Redis server" lines
	SlowNotice bool     // "** SLOW COMPUTER **": runtest fell back to one client
	AllPassed  bool     // "All tests passed without errors!"
	TheEnd     bool     // runtest reached its summary ("The End")
	ErrorLines []string // other lines that look like trouble (I/O errors, crashes), for the report
}

// UnitResolver picks, for a test that finished while several units were
// running, which of candidates it belongs to ("" if it cannot tell).
type UnitResolver func(test string, candidates []string) string

// ParseRuntest reads runtest's output. resolve may be nil; it is only asked
// when more than one unit was running (--clients > 1) when a test passed.
func ParseRuntest(output string, resolve UnitResolver) Parsed {
	var p Parsed
	var active []string // units assigned and not yet done, in order
	var cur *TestResult // the last err/exception, to which following lines belong
	curLines := 0
	unitFor := func(name string) string {
		switch len(active) {
		case 0:
			return ""
		case 1:
			return active[0]
		}
		if resolve != nil {
			return resolve(name, append([]string(nil), active...))
		}
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(ansiRe.ReplaceAllString(sc.Text(), ""), "\r")
		if m := statusRe.FindStringSubmatch(line); m != nil {
			cur = nil
			data := m[2]
			switch m[1] {
			case "ok":
				t := TestResult{Name: data, Status: TestOK}
				if mm := okRe.FindStringSubmatch(data); mm != nil {
					t.Name = mm[1]
					ms, _ := strconv.Atoi(mm[2])
					t.Duration = time.Duration(ms) * time.Millisecond
				}
				t.Unit = unitFor(t.Name)
				p.Tests = append(p.Tests, t)
			case "err":
				t := TestResult{Name: data, Status: TestErr}
				if mm := errInRe.FindStringSubmatch(data); mm != nil {
					t.Name, t.Unit = mm[1], mm[2]
				} else {
					t.Unit = unitFor(data)
				}
				p.Tests = append(p.Tests, t)
				cur, curLines = &p.Tests[len(p.Tests)-1], 0
			case "exception":
				t := TestResult{Name: "(test client)", Status: TestException, Reason: data}
				p.Tests = append(p.Tests, t)
				cur, curLines = &p.Tests[len(p.Tests)-1], 0
			case "skip":
				p.Tests = append(p.Tests, TestResult{Name: data, Status: TestSkipped, Unit: unitFor(data)})
			case "ignore":
				t := TestResult{Name: data, Status: TestIgnored}
				if strings.HasPrefix(data, "Tag: ") || strings.HasPrefix(data, "Not supported ") {
					// a whole start_server block ignored: no test name
					t.Name, t.Reason = "(server block)", data
				}
				for _, why := range []string{": Tag: ", ": Not supported "} {
					if i := strings.LastIndex(data, why); i >= 0 {
						t.Name, t.Reason = data[:i], data[i+2:]
						break
					}
				}
				t.Unit = unitFor(t.Name)
				p.Tests = append(p.Tests, t)
			}
			continue
		}
		if m := doneRe.FindStringSubmatch(line); m != nil {
			cur = nil
			secs, _ := strconv.Atoi(m[4])
			p.Units = append(p.Units, Unit{Name: m[3], Duration: time.Duration(secs) * time.Second})
			for i, u := range active {
				if u == m[3] {
					active = append(active[:i], active[i+1:]...)
					break
				}
			}
			continue
		}
		if m := testingRe.FindStringSubmatch(line); m != nil {
			cur = nil
			active = append(active, m[1])
			continue
		}
		switch {
		case strings.HasPrefix(line, "[TIMEOUT]"):
			cur = nil
			p.Timeout = true
			continue
		case strings.HasPrefix(line, "Killing still running Redis server"):
			cur = nil
			p.Killed = append(p.Killed, strings.TrimSpace(strings.TrimPrefix(line, "Killing still running Redis server")))
			continue
		case strings.Contains(line, "** SLOW COMPUTER **"):
			p.SlowNotice = true
		case strings.Contains(line, "All tests passed without errors!"):
			p.AllPassed = true
		case strings.TrimSpace(line) == "The End":
			cur = nil
			p.TheEnd = true
			continue
		case strings.HasPrefix(line, "*** "):
			cur = nil
			continue
		}
		if cur != nil {
			// The details of an err/exception: keep the first lines.
			limit := 12
			if cur.Status == TestException {
				limit = 60 // the Tcl stack names the test and its file near the end
			}
			if curLines < limit && strings.TrimSpace(line) != "" {
				if cur.Reason != "" {
					cur.Reason += "\n"
				}
				cur.Reason += line
			}
			curLines++
			continue
		}
		if troubleLine(line) && len(p.ErrorLines) < 20 {
			p.ErrorLines = append(p.ErrorLines, line)
		}
	}
	for i := range p.Tests {
		t := &p.Tests[i]
		if t.Status != TestException {
			continue
		}
		// "Executing test client: ... while executing "test {NAME} {..." (file "tests/unit/x.tcl" line N)"
		if m := excTestRe.FindStringSubmatch(t.Reason); m != nil {
			t.Name = m[1] + m[2]
		}
		if m := excFileRe.FindStringSubmatch(t.Reason); m != nil {
			t.Unit = m[1]
		}
	}
	return p
}

// troubleLine reports whether a line outside a test's details tells of trouble.
func troubleLine(line string) bool {
	for _, s := range []string{"I/O error reading reply", "Connection refused", "connection reset", "child killed",
		"Segmentation fault", "crashed by signal", "ASSERTION FAILED", "Killed", "Timed out", "timed out", "error writing", "broken pipe"} {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

// TestIndex maps test names to the units that define them, read from a
// Redis tree's tests/ folder: the resolver for parallel runs.
type TestIndex struct {
	byUnit map[string][]*regexp.Regexp
}

var testDeclRe = regexp.MustCompile(`(?m)^\s*test\s+(?:\{([^}\n]*)\}|"([^"\n]*)")`)
var tclSubstRe = regexp.MustCompile(`\$\{?[A-Za-z_:][A-Za-z0-9_:]*\}?(\([^)]*\))?|\[[^\]]*\]`)

// LoadTestIndex reads every tests/unit/**.tcl and tests/integration/**.tcl
// under testsDir (the tree's tests/ folder).
func LoadTestIndex(testsDir string) (*TestIndex, error) {
	idx := &TestIndex{byUnit: map[string][]*regexp.Regexp{}}
	for _, top := range []string{"unit", "integration"} {
		err := filepath.WalkDir(filepath.Join(testsDir, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".tcl") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(testsDir, path)
			unit := filepath.ToSlash(strings.TrimSuffix(rel, ".tcl"))
			for _, m := range testDeclRe.FindAllStringSubmatch(string(b), -1) {
				idx.byUnit[unit] = append(idx.byUnit[unit], namePattern(m[1]+m[2]))
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	return idx, nil
}

// namePattern turns a test name as written in Tcl (with $vars and [cmds])
// into a regexp matching the names runtest prints.
func namePattern(decl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range tclSubstRe.FindAllStringIndex(decl, -1) {
		b.WriteString(regexp.QuoteMeta(decl[last:loc[0]]))
		b.WriteString(".*")
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(decl[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// Resolve is a UnitResolver: the one candidate whose tests match name.
func (x *TestIndex) Resolve(name string, candidates []string) string {
	found := ""
	for _, u := range candidates {
		for _, re := range x.byUnit[u] {
			if re.MatchString(name) {
				if found != "" && found != u {
					return "" // ambiguous
				}
				found = u
				break
			}
		}
	}
	return found
}
