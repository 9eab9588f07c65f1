// Command redis-loadgen is "redis-variants loadgen" as a standalone binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis-variants/redis-variants/loadgen/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := cli.NewCommand()
	cmd.Use = "redis-loadgen"
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "redis-loadgen:", err)
		os.Exit(1)
	}
}
