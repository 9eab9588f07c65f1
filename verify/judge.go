package verify

import (
	"fmt"
	"strings"
)

// Judge turns runtest's parsed output and exit status into a Suite: each
// failure on the known list for this build becomes "known" (with the list's
// reason), and the failures that are not are returned for a retry on their
// own. A non-zero exit without a failed test is never a pass: Aborted says
// what the output shows happened.
func Judge(p Parsed, exitCode int, known *KnownList, allocator, compiler string) (Suite, []TestResult) {
	s := Suite{Ran: true, ExitCode: exitCode, Units: p.Units}
	var retry []TestResult
	var exception *TestResult
	for _, t := range p.Tests {
		if t.Status == TestErr || t.Status == TestException {
			if k := known.Match(t.Unit, t.Name, allocator, compiler); k != nil {
				first := firstLine(t.Reason)
				t.Status = TestKnown
				t.Reason = "known failure: " + strings.TrimSpace(k.Reason)
				if first != "" {
					t.Reason += " (this run: " + first + ")"
				}
			} else {
				retry = append(retry, t)
			}
		}
		s.Tests = append(s.Tests, t)
		if t.Status == TestException && exception == nil {
			exception = &s.Tests[len(s.Tests)-1]
		}
	}
	switch {
	case exception != nil:
		s.Aborted = fmt.Sprintf("runtest aborted by an exception in %q (%s): the units still running were killed and later units never ran; %s",
			exception.Name, orUnknown(exception.Unit), firstLine(exception.Reason))
	case p.Timeout:
		s.Aborted = "runtest timed out (no progress for --timeout seconds) and killed its servers" + killedNote(p)
	case exitCode != 0 && !hasFailure(s.Tests):
		s.Aborted = fmt.Sprintf("runtest exited %d without a failed test%s%s", exitCode, killedNote(p), troubleNote(p))
		if !p.TheEnd {
			s.Aborted += "; it stopped before its summary (crash, kill or timeout)"
		}
	case exitCode == 0 && !p.AllPassed && !p.TheEnd:
		s.Aborted = "runtest exited 0 but never reached its summary: the output is incomplete"
	}
	tally(&s)
	return s, retry
}

// ApplyRetry records the outcome of retrying one failed test on its own.
func ApplyRetry(s *Suite, r Retry) {
	s.Retries = append(s.Retries, r)
	for i := range s.Tests {
		t := &s.Tests[i]
		if t.Name != r.Name || t.Unit != r.Unit || (t.Status != TestErr && t.Status != TestException) || t.Retried != "" {
			continue
		}
		if r.Passed {
			t.Retried = "passed"
			t.Reason = "failed once, passed when retried on its own (flaky): " + firstLine(t.Reason)
			t.Status = TestOK
		} else {
			t.Retried = "failed"
		}
		break
	}
	tally(s)
}

// RetryPassed reads the output of `runtest --single unit --only name`: did
// that test run and pass, with no failure?
func RetryPassed(output string, exitCode int, name string) (bool, string) {
	p := ParseRuntest(output, nil)
	ran := false
	for _, t := range p.Tests {
		if t.Name != name {
			continue
		}
		switch t.Status {
		case TestOK:
			ran = true
		case TestErr, TestException:
			return false, "failed again: " + firstLine(t.Reason)
		}
	}
	switch {
	case !ran:
		return false, fmt.Sprintf("the retry did not run the test (runtest exit %d)%s", exitCode, troubleNote(p))
	case exitCode != 0:
		return false, fmt.Sprintf("the test passed but runtest exited %d%s%s", exitCode, killedNote(p), troubleNote(p))
	}
	return true, "passed on its own"
}

func tally(s *Suite) {
	s.Passed, s.Failed, s.Known, s.Skipped, s.Ignored = 0, 0, 0, 0, 0
	for _, t := range s.Tests {
		switch t.Status {
		case TestOK:
			s.Passed++
		case TestErr, TestException:
			s.Failed++
		case TestKnown:
			s.Known++
		case TestSkipped:
			s.Skipped++
		case TestIgnored:
			s.Ignored++
		}
	}
}

func hasFailure(ts []TestResult) bool {
	for _, t := range ts {
		if t.Status == TestErr || t.Status == TestException || t.Status == TestKnown {
			return true
		}
	}
	return false
}

func killedNote(p Parsed) string {
	if len(p.Killed) == 0 {
		return ""
	}
	return fmt.Sprintf("; it killed still-running servers (pids %s)", strings.Join(p.Killed, ", "))
}

func troubleNote(p Parsed) string {
	if len(p.ErrorLines) == 0 {
		return ""
	}
	n := min(3, len(p.ErrorLines))
	return "; output says: " + strings.Join(p.ErrorLines[:n], " | ")
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unit unknown"
	}
	return s
}
