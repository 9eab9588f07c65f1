// Command redis-variants turns one variants.yaml into a ranked set of tuned
// Redis container images: build, verify, benchmark, rank, report, publish.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// go-redis logs its own retries (a server still starting refuses
	// connections): every caller here waits and reports failures itself.
	redis.SetLogger(quiet{})
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "redis-variants:", err)
		os.Exit(1)
	}
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
