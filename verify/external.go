package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/engine"
)

// ExternalArgs are the redis-server arguments Redis's own CI starts an
// external server with (.github/workflows/external.yml).
var ExternalArgs = []string{"--enable-debug-command", "yes", "--enable-protected-configs", "yes", "--enable-module-command", "yes"}

// ExternalSuite runs runtest from tree (a Redis tree with runtest and
// tests/, see ExtractTestTree) with the host's tclsh against a fresh
// container of image: the tests meant for an external server. A failed
// attempt is retried once on a fresh container; both attempts are
// reported, and an unexplained failure is never a pass.
func ExternalSuite(ctx context.Context, e Engine, image, tree string, units []string, known *KnownList, allocator, compiler string) *Suite {
	start := time.Now()
	if _, err := exec.LookPath("tclsh"); err != nil {
		return &Suite{Ran: false, Aborted: "the external run needs tclsh on this machine (apt-get install tcl): " + err.Error(), Duration: time.Since(start)}
	}
	args := []string{"--tags", "-slow", "--timeout", "600", "--clients", "1"}
	for _, u := range units {
		args = append(args, "--single", u)
	}
	var notes []string
	var s Suite
	for attempt := 1; attempt <= 2; attempt++ {
		var logs string
		s, logs = externalAttempt(ctx, e, image, tree, args, known, allocator, compiler)
		reason := failedReason(&s)
		if reason == "" {
			break
		}
		why := reason
		if crash := crashLines(logs); crash != "" {
			why += "; server log: " + crash
		}
		notes = append(notes, fmt.Sprintf("attempt %d failed: %s", attempt, why))
		if ctx.Err() != nil {
			break
		}
	}
	if len(notes) > 0 {
		s.Note = strings.Join(notes, "\n")
		if failedReason(&s) == "" {
			s.Note += "\nattempt 2 on a fresh container passed"
		}
	}
	s.Args = args
	s.Duration = time.Since(start)
	return &s
}

func externalAttempt(ctx context.Context, e Engine, image, tree string, args []string, known *KnownList, allocator, compiler string) (Suite, string) {
	srv, err := e.StartServer(ctx, engine.ServerSpec{Image: image, Network: "host", Args: ExternalArgs,
		Labels: map[string]string{labelPrefix + "verify": "external"}})
	if err != nil {
		return Suite{Ran: true, ExitCode: -1, Aborted: "starting the server: " + err.Error()}, ""
	}
	defer e.Remove(context.WithoutCancel(ctx), srv.ID)
	if err := e.WaitReady(ctx, srv, 30*time.Second); err != nil {
		logs, _ := e.Logs(ctx, srv.ID)
		return Suite{Ran: true, ExitCode: -1, Aborted: "the server did not answer PING: " + err.Error()}, logs
	}
	_, port, _ := strings.Cut(srv.Addr, ":")
	if i := strings.LastIndex(srv.Addr, ":"); i >= 0 {
		port = srv.Addr[i+1:]
	}
	host := strings.TrimSuffix(srv.Addr, ":"+port)
	cmd := exec.CommandContext(ctx, "./runtest", append([]string{"--host", host, "--port", port}, args...)...)
	cmd.Dir = tree
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(runErr, &ee):
		code = ee.ExitCode()
	case runErr != nil:
		code = -1
	}
	logs, _ := e.Logs(ctx, srv.ID)
	p := ParseRuntest(out.String(), nil)
	// runtest's output does not say whether the server died; its log does.
	if crash := crashLines(logs); crash != "" {
		p.ErrorLines = append(p.ErrorLines, "server log: "+crash)
	}
	s, retry := Judge(p, code, known, allocator, compiler)
	_ = retry // the whole attempt is retried on a fresh container instead
	if runErr != nil && code == -1 {
		s.Aborted = "running runtest: " + runErr.Error()
	}
	s.Log = tailLines(out.String(), 40)
	if code != 0 && s.Aborted == "" && s.Failed == 0 && s.Known == 0 {
		s.Aborted = "runtest exited " + strconv.Itoa(code) + " without a failed test"
	}
	return s, logs
}

// crashLines picks the lines of a Redis log that tell of a crash.
func crashLines(logs string) string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "crashed by signal") || strings.Contains(l, "ASSERTION FAILED") ||
			strings.Contains(l, "Out Of Memory") || strings.Contains(l, "Guru Meditation") || strings.Contains(l, "STACK TRACE") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	if len(out) > 5 {
		out = out[:5]
	}
	return strings.Join(out, " | ")
}
