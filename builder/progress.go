package builder

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	bk "github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/progress/progressui"
	digest "github.com/opencontainers/go-digest"

	"github.com/redis-variants/redis-variants/progress"
)

// tailN is how many log lines a failed result keeps.
const tailN = 30

// displays returns the progress displays for one solve: the full log
// file (plain, every vertex's output). The console shows the tracker's
// summary instead (Build's task), never BuildKit's own lines.
func (b *Builder) displays(logFile io.Writer) ([]progressui.Display, error) {
	file, err := progressui.NewDisplay(logFile, progressui.PlainMode)
	if err != nil {
		return nil, err
	}
	return []progressui.Display{file}, nil
}

// stepRE matches the Dockerfile steps that do work: "[build 3/7] RUN ...",
// not FROM (an image reference BuildKit resolves, never marked cached).
var stepRE = regexp.MustCompile(`^\[[^\]]+ \d+/\d+\] (?:RUN|COPY|ADD|WORKDIR) `)

type vertexState struct {
	name      string
	cached    bool
	started   bool
	completed bool
	err       string
	log       []string // last lines
	part      []byte   // unterminated last line
}

// tracker follows one solve: which steps ran or were cached, and the tail
// of every vertex's output for the failure report.
type tracker struct {
	task  *progress.Task // shown the solve's status after each update (nil: none)
	phase string         // prefix of that status ("pgo training: ")
	mu    sync.Mutex
	order []digest.Digest
	v     map[digest.Digest]*vertexState
}

func newTracker() *tracker { return &tracker{v: map[digest.Digest]*vertexState{}} }

func (t *tracker) get(d digest.Digest) *vertexState {
	s, ok := t.v[d]
	if !ok {
		s = &vertexState{}
		t.v[d] = s
		t.order = append(t.order, d)
	}
	return s
}

func (t *tracker) update(ss *bk.SolveStatus) {
	t.record(ss)
	if t.task != nil {
		t.task.Update("%s%s", t.phase, t.status())
	}
}

func (t *tracker) record(ss *bk.SolveStatus) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, v := range ss.Vertexes {
		s := t.get(v.Digest)
		if v.Name != "" {
			s.name = v.Name
		}
		if v.Cached {
			s.cached = true
		}
		if v.Started != nil {
			s.started = true
		}
		if v.Completed != nil {
			s.completed = true
		}
		if v.Error != "" {
			s.err = v.Error
		}
	}
	for _, l := range ss.Logs {
		s := t.get(l.Vertex)
		data := append(s.part, l.Data...)
		lines := strings.Split(string(data), "\n")
		s.part = []byte(lines[len(lines)-1])
		for _, line := range lines[:len(lines)-1] {
			s.log = append(s.log, strings.TrimRight(line, "\r"))
		}
		if len(s.log) > 4*tailN {
			s.log = append([]string(nil), s.log[len(s.log)-tailN:]...)
		}
	}
}

// counts returns the Dockerfile steps answered from cache, and all of them.
func (t *tracker) counts() (cached, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range t.order {
		s := t.v[d]
		if !stepRE.MatchString(s.name) {
			continue
		}
		total++
		if s.cached {
			cached++
		}
	}
	return cached, total
}

// status is the solve's state in one line for a live display: the
// Dockerfile steps done (cached) of those known so far, and the step
// running now.
func (t *tracker) status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var done, cached, total int
	running := ""
	for _, d := range t.order {
		s := t.v[d]
		if !stepRE.MatchString(s.name) {
			continue
		}
		total++
		switch {
		case s.cached:
			cached++
			done++
		case s.completed:
			done++
		case s.started:
			running = s.name
		}
	}
	if total == 0 {
		return "resolving"
	}
	out := fmt.Sprintf("step %d/%d (%d cached)", done, total, cached)
	switch {
	case running != "":
		out += " " + running
	case done == total:
		out += ", exporting"
	}
	return out
}

// failedStep names the last step that failed and why, briefly.
func (t *tracker) failedStep() (name, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.order) - 1; i >= 0; i-- {
		s := t.v[t.order[i]]
		if s.err != "" && !strings.Contains(s.err, "context canceled") {
			return s.name, errSummary(s.err)
		}
	}
	return "", ""
}

// failureTail is the last lines of the failed step's output and its error.
func (t *tracker) failureTail(err error) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	// The step that failed, not one BuildKit canceled because of it (a
	// step of another stage running beside it has output of its own);
	// a canceled step with output only when no step failed of itself.
	pick := -1
	for i := len(t.order) - 1; i >= 0 && pick < 0; i-- {
		if s := t.v[t.order[i]]; s.err != "" && !strings.Contains(s.err, "context canceled") {
			pick = i
		}
	}
	for i := len(t.order) - 1; i >= 0; i-- {
		s := t.v[t.order[i]]
		if pick >= 0 && i != pick || s.err == "" || strings.Contains(s.err, "context canceled") && len(s.log) == 0 {
			continue
		}
		lines := append([]string(nil), s.log...)
		if len(s.part) > 0 {
			lines = append(lines, string(s.part))
		}
		lines = append(lines, "ERROR: "+shorten(s.name, 100)+": "+errSummary(s.err))
		if len(lines) > tailN {
			lines = lines[len(lines)-tailN:]
		}
		out = lines
		break
	}
	if out == nil && err != nil {
		out = tailLines(err.Error(), tailN)
	}
	return out
}

func tailLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// errSummary drops the echoed command from BuildKit's "process ... did not
// complete successfully: exit code: N".
func errSummary(e string) string {
	const marker = "did not complete successfully: "
	if i := strings.LastIndex(e, marker); i >= 0 {
		return e[i+len(marker):]
	}
	return shorten(e, 300)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
