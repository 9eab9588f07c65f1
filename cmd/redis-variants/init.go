package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdInit(g *globals) *cobra.Command {
	o := &pipeline.InitOptions{}
	cmd := &cobra.Command{
		Use:   "init [-f FILE]",
		Short: "Write a commented starter variants file for this machine",
		Long: `Writes a starter variants file (-f, default variants.yaml; - prints it) for
this machine: variants at its CPU's x86-64 level and at -march=native, the
compilers the base image offers, the distribution's package and the
official image as references. Redis comes from the built-in catalogue of
releases, so the file needs no sources: section. An existing file is kept
unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return pipeline.Init(config(cmd, g), *o) },
	}
	cmd.Flags().StringVar(&o.Base, "base", "", "base image (debian:bookworm-slim or debian:trixie-slim)")
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite an existing file")
	return cmd
}
