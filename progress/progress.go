// Package progress is what a run shows while it works, in the manner of
// buildx's --progress: on a terminal (tty) one live line per stage and per
// running task, redrawn in place, with a counter and an ETA where the
// stage knows its total; anywhere else (plain) one line per finished task
// and nothing that redraws, so a log file holds no control characters;
// quiet prints only failures. Whatever the mode, the full logs are the
// stages' own files in the run folder.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// Modes.
const (
	Auto  = "auto"  // tty on a terminal, else plain
	TTY   = "tty"   // live lines, redrawn in place
	Plain = "plain" // one line per finished task
	Quiet = "quiet" // failures only
)

// Modes lists the accepted modes, for flag help and errors.
var Modes = []string{Auto, TTY, Plain, Quiet}

// Printer writes progress to one writer. Its methods are safe for
// concurrent use; a nil *Printer discards everything.
type Printer struct {
	mu    sync.Mutex
	w     io.Writer
	mode  string // tty, plain or quiet (auto resolved)
	width func() int
	now   func() time.Time

	stage      string
	stageStart time.Time
	counter    *Counter
	tasks      []*Task
	drawn      int // live lines on screen now
	stop       chan struct{}
	done       chan struct{}
}

// New returns a printer writing to w in mode ("" = auto). Auto is tty
// when w is a terminal, else plain.
func New(w io.Writer, mode string) (*Printer, error) {
	p := &Printer{w: w, mode: mode, now: time.Now, width: func() int { return 100 }}
	f, isFile := w.(*os.File)
	isTerm := isFile && term.IsTerminal(int(f.Fd()))
	switch mode {
	case "", Auto:
		p.mode = Plain
		if isTerm {
			p.mode = TTY
		}
	case TTY, Plain, Quiet:
	default:
		return nil, fmt.Errorf("unknown progress mode %q (accepted: %s)", mode, strings.Join(Modes, ", "))
	}
	if isTerm {
		p.width = func() int {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				return w
			}
			return 100
		}
	}
	if p.mode == TTY {
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.tick()
	}
	return p, nil
}

// Mode is the resolved mode: tty, plain or quiet.
func (p *Printer) Mode() string {
	if p == nil {
		return Quiet
	}
	return p.mode
}

// Close stops redrawing and leaves the last live lines cleared.
func (p *Printer) Close() {
	if p == nil || p.stop == nil {
		return
	}
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.stop = nil
}

func (p *Printer) tick() {
	defer close(p.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.redraw()
			p.mu.Unlock()
		}
	}
}

// Stage starts a stage (build, verify, bench, ...): on a terminal its
// line stays at the top of the live region with the elapsed time; plain
// prints nothing until the stage ends (the caller prints what it did).
func (p *Printer) Stage(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage, p.stageStart, p.counter = name, p.now(), nil
}

// EndStage ends the current stage.
func (p *Printer) EndStage() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stage, p.counter = "", nil
	p.redraw()
}

// Println prints a line that stays (not in quiet mode), above the live
// lines on a terminal.
func (p *Printer) Println(format string, a ...any) {
	if p == nil || p.mode == Quiet {
		return
	}
	p.print(fmt.Sprintf(format, a...))
}

// Writer returns a writer whose every line is printed with Println.
func (p *Printer) Writer() io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			p.Println("%s", l)
		}
		return len(b), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// Failure prints a line that stays, in every mode.
func (p *Printer) Failure(format string, a ...any) {
	if p == nil {
		return
	}
	p.print(fmt.Sprintf(format, a...))
}

func (p *Printer) print(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	s = strings.TrimRight(s, "\n")
	if p.mode != TTY {
		s = Clean(s)
	}
	fmt.Fprintln(p.w, s)
	p.redraw()
}

// Task is one unit of a stage shown while it runs (a build, a
// verification): on a terminal its own live line.
type Task struct {
	p      *Printer
	name   string
	start  time.Time
	status string
}

// Start begins a task named name.
func (p *Printer) Start(name string) *Task {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := &Task{p: p, name: name, start: p.now()}
	p.tasks = append(p.tasks, t)
	return t
}

// Update sets what the task is doing now (its live line on a terminal;
// plain shows nothing until Done).
func (t *Task) Update(format string, a ...any) {
	if t == nil {
		return
	}
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.status = fmt.Sprintf(format, a...)
}

// Done ends the task with its one line (printed in tty and plain mode).
func (t *Task) Done(format string, a ...any) { t.end(false, format, a...) }

// Fail ends the task with its one line, printed in every mode.
func (t *Task) Fail(format string, a ...any) { t.end(true, format, a...) }

func (t *Task) end(failed bool, format string, a ...any) {
	if t == nil {
		return
	}
	p := t.p
	p.mu.Lock()
	p.remove(t)
	p.mu.Unlock()
	if failed || p.mode != Quiet {
		p.print(fmt.Sprintf(format, a...))
	}
}

// Remove ends the task without a line of its own (the caller prints the
// outcome).
func (t *Task) Remove() {
	if t == nil {
		return
	}
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	t.p.remove(t)
}

func (p *Printer) remove(t *Task) {
	for i, x := range p.tasks {
		if x == t {
			p.tasks = append(p.tasks[:i], p.tasks[i+1:]...)
			return
		}
	}
}

// Elapsed is how long the task has run.
func (t *Task) Elapsed() time.Duration {
	if t == nil {
		return 0
	}
	return t.p.now().Sub(t.start)
}

// Counter counts a stage's units (bench windows) towards a known total;
// on a terminal the stage line shows done/total and an ETA from the rate
// so far, and plain mode prints a line each time another tenth is done.
type Counter struct {
	p          *Printer
	what       string
	total      int
	done       int
	first      int // done when counting started (resumed work), left out of the rate
	start      time.Time
	lastTenth  int
	lastDetail string
}

// Count starts counting the current stage's units.
func (p *Printer) Count(what string, done, total int) *Counter {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := &Counter{p: p, what: what, total: total, done: done, first: done, start: p.now(), lastTenth: tenth(done, total)}
	p.counter = c
	return c
}

// Add records n more units done; detail is the latest unit's one-line
// result (shown on a terminal).
func (c *Counter) Add(n int, detail string) {
	if c == nil {
		return
	}
	p := c.p
	p.mu.Lock()
	c.done += n
	c.lastDetail = detail
	line := ""
	if p.mode == Plain {
		if tn := tenth(c.done, c.total); tn > c.lastTenth {
			c.lastTenth = tn
			line = c.line()
		}
	}
	p.mu.Unlock()
	if line != "" {
		p.print(line)
	}
}

// Grow adds n units to the total (work scheduled while counting, such as
// a replicate's stand-in).
func (c *Counter) Grow(n int) {
	if c == nil {
		return
	}
	c.p.mu.Lock()
	c.total += n
	c.p.mu.Unlock()
}

func tenth(done, total int) int {
	if total <= 0 {
		return 0
	}
	return 10 * done / total
}

// line is the counter's text: "bench: 34/160 windows (21%), 3m10s, ETA 11m".
func (c *Counter) line() string {
	el := c.p.now().Sub(c.start)
	s := fmt.Sprintf("%s/%d %s", fmt.Sprint(c.done), c.total, c.what)
	if c.total > 0 {
		s += fmt.Sprintf(" (%d%%)", 100*c.done/c.total)
	}
	s += ", " + Duration(el)
	if eta, ok := c.eta(el); ok {
		s += ", ETA " + Duration(eta)
	}
	return s
}

func (c *Counter) eta(el time.Duration) (time.Duration, bool) {
	n := c.done - c.first
	if n <= 0 || c.total <= c.done {
		return 0, false
	}
	return time.Duration(float64(el) / float64(n) * float64(c.total-c.done)), true
}

// clear removes the live lines (tty only). Called with mu held.
func (p *Printer) clear() {
	if p.mode != TTY || p.drawn == 0 {
		return
	}
	fmt.Fprintf(p.w, "\x1b[%dA\x1b[J", p.drawn)
	p.drawn = 0
}

// redraw draws the live lines (tty only): the stage with its elapsed time
// (and counter), then one line per running task. Called with mu held.
func (p *Printer) redraw() {
	if p.mode != TTY || p.stop == nil {
		return
	}
	p.clear()
	var lines []string
	if p.stage != "" {
		s := fmt.Sprintf("[+] %s %s", p.stage, Duration(p.now().Sub(p.stageStart)))
		if p.counter != nil {
			s += "  " + p.counter.line()
			if p.counter.lastDetail != "" {
				lines = append(lines, s, " => "+p.counter.lastDetail)
				s = ""
			}
		}
		if s != "" {
			lines = append(lines, s)
		}
	}
	for _, t := range p.tasks {
		s := fmt.Sprintf(" => %-24s %6s", t.name, Duration(p.now().Sub(t.start)))
		if t.status != "" {
			s += "  " + t.status
		}
		lines = append(lines, s)
	}
	w := p.width()
	for _, l := range lines {
		fmt.Fprintln(p.w, Truncate(l, w-1))
	}
	p.drawn = len(lines)
}

// Duration formats d briefly: 4.2s, 3m07s, 1h02m.
func Duration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Truncate shortens s to at most n runes (a terminal line must not wrap,
// or the redraw moves up too few lines), marking the cut with "…".
func Truncate(s string, n int) string {
	if n < 1 {
		n = 1
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Clean drops control characters (escape sequences, carriage returns,
// backspaces) from s, so a line written to a file or pipe holds text only.
func Clean(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b { // skip an escape sequence: ESC [ ... final byte
			if i+1 < len(s) && s[i+1] == '[' {
				i += 2
				for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
					i++
				}
			}
			continue
		}
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f }
