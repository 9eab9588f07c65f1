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
	"strings"

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

// Report is the verification of one variant (results.Verification, the
// record the run folder holds); the other names are its parts.
type (
	Report     = results.Verification
	Suite      = results.Suite
	Unit       = results.Unit
	TestResult = results.TestResult
	Retry      = results.Retry
	Check      = results.Check
	Discovered = results.Discovered
)

// failedReason says why the suite counts against the variant ("" when it
// does not).
func failedReason(s *Suite) string {
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
func Rel(name string) string { return results.VerificationRel(name) }

// Write writes r to runs/<id>/verify/<name>.json atomically.
func Write(run *results.Run, r Report) error {
	return run.WriteJSON(Rel(r.Variant), r)
}

// Passed reports whether variant name was verified and passed in run; when
// not, it says why.
func Passed(run *results.Run, name, imageID string) (bool, string) {
	var r Report
	if err := run.ReadJSON(Rel(name), &r); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, fmt.Sprintf("variant %q has not been verified (no %s)", name, run.Path(Rel(name)))
		}
		return false, fmt.Sprintf("variant %q: %v", name, err)
	}
	if imageID != "" && r.ImageID != imageID {
		if r.ImageID == "" {
			return false, fmt.Sprintf("variant %q: its verification (%s) names no image ID, so it cannot be told to describe %s: verify again", name, run.Path(Rel(name)), imageID)
		}
		return false, fmt.Sprintf("variant %q: its verification describes image %s, not %s (the image built since): verify again", name, short(r.ImageID), short(imageID))
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
