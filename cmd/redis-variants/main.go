// Command redis-variants turns one variants.yaml into a ranked set of tuned
// Redis container images: build, verify, benchmark, rank, report, publish.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis-variants/redis-variants/bench"
	"github.com/redis-variants/redis-variants/gate"
	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// go-redis logs its own retries (a server still starting refuses
	// connections): every caller here waits and reports failures itself.
	redis.SetLogger(quiet{})
	err := newRoot().ExecuteContext(ctx)
	var ec exitCode
	if errors.As(err, &ec) {
		os.Exit(int(ec))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis-variants:", err)
		os.Exit(exitStatus(err))
	}
}

// exitStatus is the status an error ends the command with: the one
// scheme of every command (README, "Exit codes"): 0 answered, 1 an error,
// 2 answered "worse" where a command judges (gate), 3 no answer (it
// measured, and the statistics cannot say: gate's "cannot tell").
func exitStatus(err error) int {
	if errors.Is(err, bench.ErrNoAnswer) {
		return gate.ExitCode(gate.CannotTell)
	}
	return 1
}

// exitCode is a command's answer given as its exit status (gate's fail
// and cannot-tell), already printed: not an error to report.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
