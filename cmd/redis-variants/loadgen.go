package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/loadgen/cli"
)

// newCmdLoadgen is "redis-variants loadgen" (see package loadgen/cli).
func newCmdLoadgen(*globals) *cobra.Command { return cli.NewCommand() }
