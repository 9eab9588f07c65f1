package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/loadgen/cli"
)

func init() { register(newCmdLoadgen) }

// newCmdLoadgen is "redis-variants loadgen" (see package loadgen/cli).
func newCmdLoadgen(*globals) *cobra.Command { return cli.NewCommand() }
