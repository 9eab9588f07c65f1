package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

type buf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buf) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *buf) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// clock is a settable time for the printer.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestPlainWritesTextOnly: piped or to a file, a finished task is one
// line, running tasks and their updates print nothing, control
// characters from a task's own output never reach the file, and the
// counter prints a line per tenth with an ETA.
func TestPlainWritesTextOnly(t *testing.T) {
	var out buf
	p, err := New(&out, Auto) // a buffer is no terminal: plain
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != Plain {
		t.Fatalf("auto on a buffer = %s, want plain", p.Mode())
	}
	c := &clock{t: time.Unix(0, 0)}
	p.now = c.now
	task := p.Start("gcc-o3")
	task.Update("step 3/18 RUN make")
	c.t = c.t.Add(90 * time.Second)
	task.Done("[gcc-o3] built in %s \x1b[31mred\x1b[0m\r", Duration(task.Elapsed()))
	p.Stage("bench")
	ctr := p.Count("windows", 0, 100)
	for i := 0; i < 100; i++ {
		c.t = c.t.Add(time.Second)
		ctr.Add(1, "pair #1: 1.01")
	}
	p.Close()
	got := out.String()
	if strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("control characters in plain output: %q", got)
	}
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != 11 || lines[0] != "[gcc-o3] built in 1m30s red" {
		t.Fatalf("%d lines, want 1 + 10:\n%s", len(lines), got)
	}
	if lines[1] != "10/100 windows (10%), 10s, ETA 1m30s" || lines[10] != "100/100 windows (100%), 1m40s" {
		t.Errorf("counter lines:\n%s", strings.Join(lines[1:], "\n"))
	}
}

// TestTTYRedrawsLiveLines: on a terminal the live region (stage, counter,
// one line per task) is cleared and redrawn in place, a line that stays
// is printed above it, and no live line is wider than the terminal.
func TestTTYRedrawsLiveLines(t *testing.T) {
	var out buf
	p, err := New(&out, TTY)
	if err != nil {
		t.Fatal(err)
	}
	p.width = func() int { return 40 }
	p.Stage("build")
	a := p.Start("clang16-o3-lto")
	a.Update("step 7/18 (5 cached) [build 7/18] RUN make -j2 CC=clang-16 CFLAGS=-O3 -flto")
	b := p.Start("gcc-o3-native")
	p.mu.Lock()
	p.redraw()
	p.mu.Unlock()
	b.Done("[gcc-o3-native] built")
	p.Close()
	got := out.String()
	if !strings.Contains(got, "\x1b[3A\x1b[J[gcc-o3-native] built\n") {
		t.Errorf("the finished line does not replace the 3 live lines:\n%q", got)
	}
	for _, l := range strings.Split(got, "\n") {
		l = strings.TrimPrefix(l, "\x1b[3A\x1b[J")
		l = strings.TrimPrefix(l, "\x1b[2A\x1b[J")
		if n := len([]rune(l)); n > 39 {
			t.Errorf("live line of %d runes on a 40-column terminal: %q", n, l)
		}
	}
	if !strings.Contains(got, " => clang16-o3-lto") || !strings.Contains(got, "[+] build") {
		t.Errorf("live lines missing:\n%q", got)
	}
}

// TestQuietPrintsFailuresOnly.
func TestQuietPrintsFailuresOnly(t *testing.T) {
	var out buf
	p, err := New(&out, Quiet)
	if err != nil {
		t.Fatal(err)
	}
	p.Println("building 3 images")
	p.Start("a").Done("[a] built")
	p.Start("b").Fail("[b] FAILED: exit code 2")
	p.Count("windows", 0, 10).Add(10, "")
	if got := out.String(); got != "[b] FAILED: exit code 2\n" {
		t.Errorf("quiet printed %q", got)
	}
	if _, err := New(&out, "fancy"); err == nil || !strings.Contains(err.Error(), "auto, tty, plain, quiet") {
		t.Errorf("unknown mode: %v", err)
	}
	var nilP *Printer // a nil printer discards everything
	nilP.Start("x").Update("y")
	nilP.Println("z")
}

func TestCleanAndTruncate(t *testing.T) {
	if got := Clean("a\x1b[2Kb\rc\x08d\te\nf"); got != "abcd\te\nf" {
		t.Errorf("Clean = %q", got)
	}
	if got := Truncate("héllo world", 6); got != "héllo…" {
		t.Errorf("Truncate = %q", got)
	}
}
