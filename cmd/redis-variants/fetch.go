package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/sources"
	"github.com/redis-variants/redis-variants/variants"
)

func newCmdFetch(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "fetch",
		Short: "Fill the content-addressed source cache with every source the variants file names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := variants.Load(g.File)
			if err != nil {
				return err
			}
			cache := sources.New(config(cmd, g).SourcesDir())
			names := make([]string, 0, len(plan.Sources))
			for n := range plan.Sources {
				names = append(names, n)
			}
			sort.Strings(names)
			failed := 0
			for _, n := range names {
				e, err := cache.Fetch(cmd.Context(), plan.Sources[n])
				if err != nil {
					failed++
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-14s sha256:%s  %s\n", n, e.SHA256, e.From)
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d sources could not be fetched", failed, len(names))
			}
			return nil
		},
	}
}
