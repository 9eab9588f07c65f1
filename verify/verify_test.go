package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func find(ts []TestResult, name string) *TestResult {
	for i := range ts {
		if ts[i].Name == name {
			return &ts[i]
		}
	}
	return nil
}

// Real runtest output (Redis 7.0.15, two clients, --durable): an assertion,
// a Tcl error, an ignored test, passing tests of two units in parallel.
func TestParseDurable(t *testing.T) {
	idx, err := LoadTestIndex("testdata/tests")
	if err != nil {
		t.Fatal(err)
	}
	p := ParseRuntest(readTestdata(t, "runtest-durable.log"), idx.Resolve)
	a := find(p.Tests, "Assertion fails")
	if a == nil || a.Status != TestErr || a.Unit != "unit/zzfail" || !strings.Contains(a.Reason, "Expected '1' to be equal to '2'") {
		t.Fatalf("assertion test: %+v", a)
	}
	if r := find(p.Tests, "Raises error"); r == nil || r.Status != TestErr || !strings.Contains(r.Reason, "boom") {
		t.Fatalf("error test: %+v", r)
	}
	if ig := find(p.Tests, "Slow thing"); ig == nil || ig.Status != TestIgnored || ig.Reason != "Tag: slow denied" {
		t.Fatalf("ignored test: %+v", ig)
	}
	// Passed while both units ran: only the index can tell the unit.
	if ok := find(p.Tests, "Passing one"); ok == nil || ok.Status != TestOK || ok.Unit != "unit/zzfail" || ok.Duration != time.Millisecond {
		t.Fatalf("passing test: %+v", ok)
	}
	if ok := find(p.Tests, "INCRBYFLOAT decrement"); ok == nil || ok.Unit != "unit/type/incr" {
		t.Fatalf("incr test: %+v", ok)
	}
	if !p.TheEnd || p.AllPassed || len(p.Units) != 2 {
		t.Fatalf("end %v allpassed %v units %v", p.TheEnd, p.AllPassed, p.Units)
	}
	// the summary's "*** [err]" lines must not be counted twice
	n := 0
	for _, x := range p.Tests {
		if x.Status == TestErr {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d err tests, want 2", n)
	}
}

func TestParseException(t *testing.T) {
	p := ParseRuntest(readTestdata(t, "runtest-exception.log"), nil)
	var exc *TestResult
	for i := range p.Tests {
		if p.Tests[i].Status == TestException {
			exc = &p.Tests[i]
		}
	}
	if exc == nil || exc.Name != "Raises error" || exc.Unit != "unit/zzfail" {
		t.Fatalf("exception: %+v", exc)
	}
	if len(p.Killed) != 1 || p.TheEnd {
		t.Fatalf("killed %v theEnd %v", p.Killed, p.TheEnd)
	}
	s, retry := Judge(p, 1, &KnownList{}, "libc", "gcc")
	if !strings.Contains(s.Aborted, "exception") || failedReason(&s) == "" {
		t.Fatalf("an exception must abort the suite: %+v", s.Aborted)
	}
	if len(retry) != 2 { // the assertion and the exception
		t.Fatalf("retry %v", retry)
	}
}

// Real output of the quick profile's units run on this machine against
// Debian's redis-server, where redis-check-aof was missing from the tree:
// real failures in integration/aof.
func TestParseQuickHost(t *testing.T) {
	p := ParseRuntest(readTestdata(t, "runtest-quick-host.log"), nil)
	s, retry := Judge(p, 1, mustKnown(t, "7.0.15"), "libc", "gcc")
	if s.Failed == 0 || len(retry) != s.Failed {
		t.Fatalf("failed %d retry %d", s.Failed, len(retry))
	}
	for _, r := range retry {
		if r.Unit != "integration/aof" {
			t.Fatalf("failure attributed to %q: %+v", r.Unit, r)
		}
	}
	if s.Passed < 500 || len(s.Units) != 13 {
		t.Fatalf("passed %d units %d", s.Passed, len(s.Units))
	}
	if s.Ignored == 0 {
		t.Fatal("no ignored tests (-slow)")
	}
}

func mustKnown(t *testing.T, v string) *KnownList {
	t.Helper()
	k, err := LoadKnown(v)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKnownList(t *testing.T) {
	k := mustKnown(t, "7.0.15")
	if len(k.Known) == 0 || k.Redis != "7.0" {
		t.Fatalf("known list: %+v", k)
	}
	if m := k.Match("unit/memefficiency", "Active defrag big keys", "jemalloc", "gcc"); m == nil {
		t.Fatal("active defrag with jemalloc is known")
	}
	if m := k.Match("unit/memefficiency", "Active defrag big keys", "libc", "gcc"); m != nil {
		t.Fatal("the active defrag entry is for jemalloc only")
	}
	if m := k.Match("unit/type/stream-cgroups", "Blocking XREADGROUP: key type changed with SET", "mimalloc", "clang"); m == nil {
		t.Fatal("stream-cgroups entry applies to every allocator")
	}
	if m := k.Match("unit/type/string", "SET and GET an item", "jemalloc", "gcc"); m != nil {
		t.Fatal("unexpected match")
	}
	if _, err := ParseKnown("x.yaml", []byte("known:\n  - unit: u\n    test: t\n")); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Fatalf("an entry without a reason must be refused: %v", err)
	}
	if l, err := LoadKnown("6.2.1"); err != nil || len(l.Known) != 0 {
		t.Fatalf("no list for 6.2: %v %v", l, err)
	}
}

const defragLog = `Testing unit/memefficiency
[ok]: Memory efficiency with values in range 32 (100 ms)
[err]: Active defrag in tests/unit/memefficiency.tcl
Expected 1.5 < 1.1 (context: ...)
[err]: SET and GET an item in tests/unit/type/string.tcl
Expected 'x' to equal 'y'
[1/1 done]: unit/memefficiency (30 seconds)

                   The End

`

func TestJudgeKnownAndRetry(t *testing.T) {
	k := mustKnown(t, "7.0.15")
	s, retry := Judge(ParseRuntest(defragLog, nil), 1, k, "jemalloc", "gcc")
	if s.Known != 1 || s.Failed != 1 || len(retry) != 1 || retry[0].Name != "SET and GET an item" {
		t.Fatalf("known %d failed %d retry %+v", s.Known, s.Failed, retry)
	}
	d := find(s.Tests, "Active defrag")
	if d.Status != TestKnown || !strings.Contains(d.Reason, "jemalloc") || !strings.Contains(d.Reason, "1.5 < 1.1") {
		t.Fatalf("known failure must be reported with its reason and this run's error: %+v", d)
	}
	// The same log with libc: the defrag failure is not known and counts.
	s2, retry2 := Judge(ParseRuntest(defragLog, nil), 1, k, "libc", "gcc")
	if s2.Known != 0 || s2.Failed != 2 || len(retry2) != 2 {
		t.Fatalf("libc: known %d failed %d", s2.Known, s2.Failed)
	}
	// A retry that fails again fails the variant; one that passes is flaky.
	failAgain := "Testing unit/type/string\n[err]: SET and GET an item in tests/unit/type/string.tcl\nExpected\n[1/1 done]: unit/type/string (1 seconds)\n"
	ok, why := RetryPassed(failAgain, 1, "SET and GET an item")
	if ok || !strings.Contains(why, "failed again") {
		t.Fatalf("retry: %v %s", ok, why)
	}
	ApplyRetry(&s, Retry{Name: "SET and GET an item", Unit: "unit/type/string", Passed: ok, Detail: why})
	if s.Failed != 1 || failedReason(&s) == "" {
		t.Fatal("a failure that fails again must fail the suite")
	}
	passAgain := readTestdata(t, "runtest-only.log") // real --only output: the test failed
	if ok, _ := RetryPassed(passAgain, 1, "Assertion fails"); ok {
		t.Fatal("real --only output with a failure must not pass")
	}
	s3, _ := Judge(ParseRuntest(defragLog, nil), 1, k, "jemalloc", "gcc")
	okOut := "[ok]: SET and GET an item (3 ms)\n[1/1 done]: unit/type/string (1 seconds)\n\n                   The End\n"
	ok, why = RetryPassed(okOut, 0, "SET and GET an item")
	ApplyRetry(&s3, Retry{Name: "SET and GET an item", Unit: "unit/type/string", Passed: ok, Detail: why})
	if !ok || s3.Failed != 0 || failedReason(&s3) != "" || find(s3.Tests, "SET and GET an item").Retried != "passed" {
		t.Fatalf("flaky test passing on retry: %+v", s3)
	}
	// The retry did not run the test at all (e.g. a wrong name): not a pass.
	if ok, _ := RetryPassed("[skip]: SET and GET an item\n", 0, "SET and GET an item"); ok {
		t.Fatal("a skipped retry is not a pass")
	}
}

func TestJudgeExitWithoutFailure(t *testing.T) {
	out := "Testing unit/type/list\n[ok]: LPUSH (1 ms)\nI/O error reading reply\nKilling still running Redis server 42\n"
	s, _ := Judge(ParseRuntest(out, nil), 1, &KnownList{}, "libc", "gcc")
	for _, want := range []string{"exited 1 without a failed test", "42", "I/O error reading reply", "before its summary"} {
		if !strings.Contains(s.Aborted, want) {
			t.Fatalf("aborted %q lacks %q", s.Aborted, want)
		}
	}
	s, _ = Judge(ParseRuntest("[TIMEOUT]: clients state report follows.\n", nil), 1, &KnownList{}, "libc", "gcc")
	if !strings.Contains(s.Aborted, "timed out") {
		t.Fatal(s.Aborted)
	}
	s, _ = Judge(ParseRuntest(readTestdata(t, "runtest-quick-host.log"), nil), 0, &KnownList{}, "libc", "gcc")
	if failedReason(&s) == "" {
		t.Fatal("failed tests with exit 0 still fail")
	}
}

func TestShellQuote(t *testing.T) {
	got := ShellQuote(RetryArgs("unit/type/stream-cgroups", "Blocking XREADGROUP: key type changed with SET"))
	want := `--clients 1 --timeout 600 --durable --single unit/type/stream-cgroups --only 'Blocking XREADGROUP: key type changed with SET'`
	if got != want {
		t.Fatalf("got %s", got)
	}
	if ShellQuote([]string{"it's"}) != `'it'\''s'` {
		t.Fatal(ShellQuote([]string{"it's"}))
	}
	// the quoting survives sh's eval
	out, err := exec.Command("sh", "-c", `eval "printf '<%s>' $A"`).CombinedOutput()
	_ = out
	if err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command("sh", "-c", `eval "printf '<%s>' $A"`)
	cmd.Env = append(os.Environ(), "A="+ShellQuote([]string{"--only", "a b's \"c\" $x"}))
	b, err := cmd.Output()
	if err != nil || string(b) != `<--only><a b's "c" $x>` {
		t.Fatalf("%s %v", b, err)
	}
}

func TestSuiteArgs(t *testing.T) {
	a, err := SuiteArgs("quick", nil)
	if err != nil || !strings.Contains(strings.Join(a, " "), "--single integration/replication-2") || !strings.Contains(strings.Join(a, " "), "-slow") {
		t.Fatalf("%v %v", a, err)
	}
	a, _ = SuiteArgs("quick", []string{"unit/type/incr"})
	if strings.Count(strings.Join(a, " "), "--single") != 1 {
		t.Fatal(a)
	}
	a, _ = SuiteArgs("full", nil)
	if strings.Contains(strings.Join(a, " "), "--single") || strings.Contains(strings.Join(a, " "), "-slow") {
		t.Fatal("full runs everything", a)
	}
	if _, err := SuiteArgs("fast", nil); err == nil {
		t.Fatal("unknown profile")
	}
}

func TestReportsAndPassed(t *testing.T) {
	run, err := results.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := Passed(run, "a", ""); ok || !strings.Contains(why, "not been verified") {
		t.Fatal(why)
	}
	if err := Write(run, Report{Variant: "a", ImageID: "sha256:aaaaaaaaaaaaaaaa", Status: StatusPassed}); err != nil {
		t.Fatal(err)
	}
	if err := Write(run, Report{Variant: "b", Status: StatusFailed, Problems: []string{"check allocator: MISMATCH"}}); err != nil {
		t.Fatal(err)
	}
	results.WriteFile(run.Path("verify", "b.runtest.log"), []byte("x"))
	if ok, _ := Passed(run, "a", "sha256:aaaaaaaaaaaaaaaa"); !ok {
		t.Fatal("a passed")
	}
	// The file was edited and a rebuilt "a" is another image: its old
	// verification proves nothing of it.
	if ok, why := Passed(run, "a", "sha256:bbbbbbbbbbbbbbbb"); ok || !strings.Contains(why, "sha256:aaaaaaaaaaaa, not sha256:bbbbbbbbbbbb") {
		t.Fatalf("a verification of another image passed: %s", why)
	}
	if ok, why := Passed(run, "b", ""); ok || !strings.Contains(why, "allocator") {
		t.Fatal(why)
	}
	if ok, why := Passed(run, "b", "sha256:b"); ok || !strings.Contains(why, "names no image ID") {
		t.Fatal(why)
	}
	all, skipped, err := results.LoadVerifications(run)
	if err != nil || len(skipped) != 0 || len(all) != 2 || all["b"].Status != StatusFailed {
		t.Fatalf("%v %v %v", all, skipped, err)
	}
}

func TestUserAndLabels(t *testing.T) {
	if c := UserCheck("Name:\tredis-server\nUid:\t999\t999\t999\t999\n", false); !c.OK {
		t.Fatal(c)
	}
	if c := UserCheck("Uid:\t0\t0\t0\t0\n", false); c.OK {
		t.Fatal("root must fail")
	}
	v := variants.Variant{Name: "gcc-o3", ID: "abc", Kind: variants.KindVariant, Allocator: "mimalloc", Opt: "O3", LTO: "off",
		Compiler: variants.Compiler{Family: "gcc", Version: "12"}}
	l := map[string]string{"io.redis-variants.id": "abc", "io.redis-variants.name": "gcc-o3", "io.redis-variants.allocator": "mimalloc",
		"io.redis-variants.compiler": "gcc-12", "io.redis-variants.opt": "O3", "io.redis-variants.lto": "off"}
	if c := LabelChecks(l, v)[0]; !c.OK {
		t.Fatal(c)
	}
	l["io.redis-variants.opt"] = "O1"
	if c := LabelChecks(l, v)[0]; c.OK || !strings.Contains(c.Detail, "opt") {
		t.Fatal(c)
	}
}

func TestAllocatorCheck(t *testing.T) {
	mimaps := "7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0\n"
	libcmaps := "7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	if c := AllocatorCheck("mimalloc", "libc", mimaps, nil); !c.OK {
		t.Fatal(c)
	}
	// a spec saying mimalloc on an image whose binary uses libc malloc
	if c := AllocatorCheck("mimalloc", "libc", libcmaps, &BinaryInfo{Symbols: true}); c.OK || !strings.Contains(c.Detail, "MISMATCH") {
		t.Fatal(c)
	}
	if c := AllocatorCheck("libc", "libc", mimaps, nil); c.OK {
		t.Fatal("libc with mimalloc mapped is not libc")
	}
	if c := AllocatorCheck("jemalloc", "jemalloc-5.2.1", libcmaps, nil); !c.OK {
		t.Fatal(c)
	}
	if c := AllocatorCheck("jemalloc", "libc", libcmaps, nil); c.OK {
		t.Fatal("libc is not jemalloc")
	}
	if c := AllocatorCheck("jemalloc-system", "jemalloc-5.3.0", "x /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n", nil); !c.OK {
		t.Fatal(c)
	}
	if c := AllocatorCheck("tcmalloc", "tcmalloc-2.10", "", nil); !c.OK {
		t.Fatal(c)
	}
	// A pulled image whose spec names no allocator: not applicable, neither
	// a pass nor a failure, and the allocator it runs is discovered.
	jemaps := "x /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
	c := AllocatorCheck("", "jemalloc-5.3.0", jemaps, nil)
	if !c.NotApplicable || c.OK || c.Failed() || c.Outcome() != "n/a" || !strings.Contains(c.Detail, "jemalloc-system") {
		t.Fatalf("no allocator in the spec: %+v", c)
	}
	for _, d := range []struct{ mem, maps, want string }{
		{"jemalloc-5.2.1", libcmaps, "jemalloc"},
		{"jemalloc-5.3.0", jemaps, "jemalloc-system"},
		{"libc", mimaps, "mimalloc"},
		{"libc", libcmaps, "libc"},
		{"libc", "", ""}, // maps not readable: libc cannot be told from an interposed allocator
		{"tcmalloc-2.10", "", "tcmalloc"},
	} {
		if got, _ := DiscoverAllocator(d.mem, d.maps, nil); got != d.want {
			t.Errorf("DiscoverAllocator(%s, %q) = %q, want %q", d.mem, d.maps, got, d.want)
		}
	}
}

// TestChecksCountThreeOutcomes: a check that cannot fail is counted as
// neither a pass nor a failure, in the verify table's column and in the
// report's summary line.
func TestChecksCountThreeOutcomes(t *testing.T) {
	cs := []Check{{Name: "ping", OK: true}, {Name: "labels"}, {Name: "pulled", NotApplicable: true}, {Name: "binary compiler", NotApplicable: true}}
	n := results.CountChecks(cs)
	if n != (results.CheckCount{Pass: 1, Fail: 1, NotApplicable: 2}) || n.String() != "1/2 +2 n/a" {
		t.Fatalf("counted %+v (%s)", n, n)
	}
	r := Report{Status: StatusFailed, Checks: cs}
	if s := r.Summary(); !strings.Contains(s, "checks 1 of 2 passed, 2 not applicable") {
		t.Fatalf("summary %q", s)
	}
	// a pulled image's user: any uid but root
	if c := UserCheck("Uid:\t101\t101\t101\t101\n", true); !c.OK {
		t.Fatal(c)
	}
	if c := UserCheck("Uid:\t101\t101\t101\t101\n", false); c.OK {
		t.Fatal("an image this tool built runs as uid 999")
	}
	if c := UserCheck("Uid:\t0\t0\t0\t0\n", true); c.OK {
		t.Fatal("root must fail for a pulled image too")
	}
}

// fixed is an Interface answering with a report of the given status.
type fixed string

func (f fixed) Verify(ctx context.Context, v variants.Variant, t Target) Report {
	return Report{Variant: v.Name, Image: t.Image, Status: string(f)}
}

func TestRecordWritesVerdictsOnly(t *testing.T) {
	run, _ := results.Open(t.TempDir())
	v := variants.Variant{Name: "a", ID: "0123456789ab"}
	if r := Record(run, fixed(StatusPassed)).Verify(context.Background(), v, Target{Image: "img:a"}); r.Status != StatusPassed {
		t.Fatal(r)
	}
	if ok, why := Passed(run, "a", ""); !ok {
		t.Fatalf("the passed report was not written: %s", why)
	}
	v.Name = "b"
	Record(run, fixed(StatusInterrupted)).Verify(context.Background(), v, Target{Image: "img:b"})
	if run.Exists(Rel("b")) {
		t.Fatal("an interrupted verification was written")
	}
	// A report that cannot be written fails.
	bad := &results.Run{Dir: "/proc/no-such-run"}
	v.Name = "c"
	if r := Record(bad, fixed(StatusPassed)).Verify(context.Background(), v, Target{}); r.Status != StatusFailed || len(r.Problems) != 1 {
		t.Fatalf("unwritable report: %+v", r)
	}
}
