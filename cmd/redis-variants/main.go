// Command redis-variants turns one variants.yaml into a ranked set of tuned
// Redis container images: build, verify, benchmark, rank, report, publish.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "redis-variants:", err)
		os.Exit(1)
	}
}
