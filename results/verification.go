package results

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// VerificationRel is the path of name's verification inside a run folder.
func VerificationRel(name string) string { return filepath.Join("verify", name+".json") }

// Verification is the verification of one entry, written by verify to
// verify/<name>.json (VerificationRel).
type Verification struct {
	Variant string `json:"variant"`
	ID      string `json:"id"`
	Image   string `json:"image"`
	ImageID string `json:"image_id,omitempty"` // the image ID (config digest) verified: a record describes that image and no other
	Pulled  string `json:"pulled,omitempty"`   // repository@digest, when the image was pulled rather than built
	Status  string `json:"status"`             // "passed", "failed"
	Profile string `json:"profile"`            // quick, full
	// Emulation is how an image of another platform ran here (qemu
	// through binfmt_misc); "" for the machine's own platform.
	Emulation string  `json:"emulation,omitempty"`
	Suite     Suite   `json:"suite"` // runtest in the build
	External  *Suite  `json:"external,omitempty"`
	Checks    []Check `json:"checks"`
	// Discovered is what the image turned out to be where its spec is
	// silent (a pulled image): its Redis version, allocator and libc.
	Discovered *Discovered   `json:"discovered,omitempty"`
	Problems   []string      `json:"problems,omitempty"` // why Status is "failed", one line each
	Duration   time.Duration `json:"duration"`
	Finished   time.Time     `json:"finished"`
	// ProofKey names what a passed verification proved (Proof.Key);
	// ReusedFrom is set when this report is a kept proof's, not run now:
	// the run folder that proved it (Finished and Duration are that run's).
	ProofKey   string `json:"proof_key,omitempty"`
	ReusedFrom string `json:"reused_from,omitempty"`
}

// Proof is a passed verification kept for reuse (.state/cache/verify/
// <key>.json): the key is the digest of its inputs.
type Proof struct {
	Key    string       `json:"key"`
	Inputs ProofInputs  `json:"inputs"`
	Run    string       `json:"run"` // the run folder that proved it
	Report Verification `json:"report"`
}

// ProofInputs is everything a verification's verdict depends on.
type ProofInputs struct {
	Image         string            `json:"image"` // image ID (config digest)
	Twin          string            `json:"twin,omitempty"`
	First         string            `json:"first,omitempty"`  // draw 1's image ID, for a layout draw
	Spec          string            `json:"spec"`             // variant ID
	Recipe        string            `json:"recipe,omitempty"` // recipe digest
	Profile       string            `json:"profile"`
	Units         []string          `json:"units,omitempty"`
	ExternalUnits []string          `json:"external_units,omitempty"`
	NoExternal    bool              `json:"no_external,omitempty"`
	Sources       map[string]string `json:"sources,omitempty"` // name -> sha256
	Known         string            `json:"known"`             // digest of the known-failure lists
	CPUFlags      []string          `json:"cpu_flags,omitempty"`
	Checks        int               `json:"checks"` // verify.ChecksVersion
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
	Log      string        `json:"log,omitempty"`           // where the full runtest output was saved
	Server   string        `json:"server_sha256,omitempty"` // sha256 of the redis-server the suite in the build ran
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

// Check is one check on the finished image. It has three outcomes: it
// passed (OK), it failed, or it is not applicable (NotApplicable): there
// is nothing for it to compare with here (the spec names no allocator for
// a pulled image, a reference records no compiler switches), so it can
// neither pass nor fail and is counted as neither.
type Check struct {
	Name          string `json:"name"`
	OK            bool   `json:"ok"`
	NotApplicable bool   `json:"not_applicable,omitempty"`
	Detail        string `json:"detail"`
}

// Outcome names the check's outcome: "pass", "fail" or "n/a".
func (c Check) Outcome() string {
	switch {
	case c.NotApplicable:
		return "n/a"
	case c.OK:
		return "pass"
	}
	return "fail"
}

// Failed says whether the check failed (a check that is not applicable
// did not).
func (c Check) Failed() bool { return !c.OK && !c.NotApplicable }

// CheckCount counts checks by outcome.
type CheckCount struct{ Pass, Fail, NotApplicable int }

// CountChecks counts cs by outcome.
func CountChecks(cs []Check) CheckCount {
	var n CheckCount
	for _, c := range cs {
		switch c.Outcome() {
		case "pass":
			n.Pass++
		case "fail":
			n.Fail++
		default:
			n.NotApplicable++
		}
	}
	return n
}

// String is passes out of the checks that could fail, and how many could
// not: "7/8 +3 n/a".
func (n CheckCount) String() string {
	s := fmt.Sprintf("%d/%d", n.Pass, n.Pass+n.Fail)
	if n.NotApplicable > 0 {
		s += fmt.Sprintf(" +%d n/a", n.NotApplicable)
	}
	return s
}

// Discovered is what verification found out about an image whose spec
// does not say (a pulled image of unknown build): read from the running
// server and its process, and recorded rather than demanded.
type Discovered struct {
	Redis     string `json:"redis,omitempty"`     // INFO server redis_version
	Allocator string `json:"allocator,omitempty"` // jemalloc, jemalloc-system, mimalloc, tcmalloc, libc
	Libc      string `json:"libc,omitempty"`      // glibc, musl, static: what the binary is linked against
	Evidence  string `json:"evidence,omitempty"`  // what the allocator was told from
}

// Summary is the verification in one line: status and profile, the
// suite in the build, the suite against the image and the checks.
func (r Verification) Summary() string {
	if r.Status == "" {
		return "not verified"
	}
	var parts []string
	s := r.Suite
	if s.Ran {
		parts = append(parts, fmt.Sprintf("suite %d ok, %d failed, %d known, %d skipped", s.Passed, s.Failed, s.Known, s.Skipped))
	} else if s.Note != "" {
		note := s.Note
		if !strings.HasPrefix(note, "not run") {
			note = "not run: " + note
		}
		parts = append(parts, "suite "+note)
	}
	if x := r.External; x != nil && x.Ran {
		parts = append(parts, fmt.Sprintf("external suite %d ok, %d failed, %d known", x.Passed, x.Failed, x.Known))
	}
	if len(r.Checks) > 0 {
		n := CountChecks(r.Checks)
		c := fmt.Sprintf("checks %d of %d passed", n.Pass, n.Pass+n.Fail)
		if n.NotApplicable > 0 {
			c += fmt.Sprintf(", %d not applicable", n.NotApplicable)
		}
		parts = append(parts, c)
	}
	out := r.Status
	if r.Profile != "" {
		out += " (" + r.Profile + ")"
	}
	if len(parts) > 0 {
		out += ": " + strings.Join(parts, "; ")
	}
	return out
}
