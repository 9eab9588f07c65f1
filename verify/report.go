// Package verify checks that a built variant is what its spec says and that
// it works: Redis's own test suite run inside the build (against the
// variant's compiled tree), a second run of the suite against the finished
// image from outside, and checks on the running image (PING, SET/GET, the
// Redis version, the allocator that really runs, the compiler and flags
// recorded in the binary, the user, the labels). It also holds the ISA gate
// that refuses to run a binary on a CPU that lacks its instructions.
//
// A variant that fails verification gets a report with Status "failed" and
// Passed returns false for it, so later stages never benchmark or publish it.
package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/results"
)

// Report statuses.
const (
	StatusPassed = "passed"
	StatusFailed = "failed"
	// StatusInterrupted is a verification cut short (Ctrl-C): never written.
	StatusInterrupted = "interrupted"
)

// Test statuses.
const (
	TestOK        = "ok"
	TestErr       = "err"
	TestException = "exception"
	TestIgnored   = "ignored"
	TestSkipped   = "skipped"
	TestKnown     = "known" // failed, and on the known-failures list for this build
)

// Report is the verification of one variant, written to
// runs/<id>/verify/<name>.json.
type Report struct {
	Variant  string        `json:"variant"`
	ID       string        `json:"id"`
	Image    string        `json:"image"`
	Pulled   string        `json:"pulled,omitempty"` // repository@digest, when the image was pulled rather than built
	Status   string        `json:"status"`           // "passed", "failed"
	Profile  string        `json:"profile"`          // quick, full
	Suite    Suite         `json:"suite"`            // runtest in the build
	External *Suite        `json:"external,omitempty"`
	Checks   []Check       `json:"checks"`
	Problems []string      `json:"problems,omitempty"` // why Status is "failed", one line each
	Duration time.Duration `json:"duration"`
	Finished time.Time     `json:"finished"`
}

// Suite is one run of Redis's test suite (runtest).
type Suite struct {
	Ran      bool          `json:"ran"`            // false when the suite was not run (e.g. a distro package has no build tree)
	Note     string        `json:"note,omitempty"` // why it did not run, or what else is worth knowing
	Args     []string      `json:"args,omitempty"` // runtest arguments
	Tests    []TestResult  `json:"tests"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"` // err + exception not on the known list and not passing on retry
	Known    int           `json:"known"`
	Skipped  int           `json:"skipped"`
	Ignored  int           `json:"ignored"`
	Units    []Unit        `json:"units,omitempty"`   // units finished, with their wall time
	ExitCode int           `json:"exit_code"`         // runtest's exit status
	Aborted  string        `json:"aborted,omitempty"` // why runtest stopped early or exited non-zero without a failed test
	Retries  []Retry       `json:"retries,omitempty"`
	Duration time.Duration `json:"duration"`
	Log      string        `json:"log,omitempty"` // where the full runtest output was saved
}

// Unit is one test unit (file) runtest finished.
type Unit struct {
	Name     string        `json:"name"` // e.g. unit/type/string
	Duration time.Duration `json:"duration"`
}

// TestResult is one test of the suite.
type TestResult struct {
	Name     string        `json:"name"`
	Unit     string        `json:"unit,omitempty"` // e.g. unit/type/string ("" when runtest's output does not say)
	Status   string        `json:"status"`         // ok err exception ignored skipped known
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"duration"`
	Retried  string        `json:"retried,omitempty"` // outcome of the retry on its own: "passed", "failed"
}

// Retry is one failed test run again on its own.
type Retry struct {
	Name     string        `json:"name"`
	Unit     string        `json:"unit"`
	Passed   bool          `json:"passed"`
	ExitCode int           `json:"exit_code"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Check is one check on the finished image.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Failed reports whether the suite has a failure that counts against the variant.
func (s *Suite) failedReason() string {
	switch {
	case s.Failed > 0:
		var names []string
		for _, t := range s.Tests {
			if t.Status == TestErr || t.Status == TestException {
				names = append(names, fmt.Sprintf("%q (%s)", t.Name, t.Unit))
			}
		}
		return fmt.Sprintf("%d test(s) failed: %s", s.Failed, strings.Join(names, ", "))
	case s.Aborted != "":
		return s.Aborted
	}
	return ""
}

// Rel is the path of name's report inside a run folder.
func Rel(name string) string { return filepath.Join("verify", name+".json") }

// Write writes r to runs/<id>/verify/<name>.json atomically.
func Write(run *results.Run, r Report) error {
	return run.WriteJSON(Rel(r.Variant), r)
}

// LoadReports reads every verify/*.json of run, keyed by variant name.
func LoadReports(run *results.Run) (map[string]Report, error) {
	out := map[string]Report{}
	ents, err := os.ReadDir(run.Path("verify"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		return nil, fmt.Errorf("reading verify reports: %w", err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		var r Report
		if err := run.ReadJSON(filepath.Join("verify", n), &r); err != nil {
			return nil, fmt.Errorf("reading verify report %s: %w", n, err)
		}
		out[strings.TrimSuffix(n, ".json")] = r
	}
	return out, nil
}

// Passed reports whether variant name was verified and passed in run; when
// not, it says why.
func Passed(run *results.Run, name string) (bool, string) {
	var r Report
	if err := run.ReadJSON(Rel(name), &r); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, fmt.Sprintf("variant %q has not been verified (no %s)", name, run.Path(Rel(name)))
		}
		return false, fmt.Sprintf("variant %q: %v", name, err)
	}
	if r.Status != StatusPassed {
		why := strings.Join(r.Problems, "; ")
		if why == "" {
			why = "status " + r.Status
		}
		return false, fmt.Sprintf("variant %q failed verification: %s", name, why)
	}
	return true, ""
}
