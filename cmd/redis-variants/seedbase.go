package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/baseimage"
)

// newCmdSeedBase is used by scripts/setup.sh: it pushes a debootstrapped
// root file system as debian:<suite>-slim to the local registry.
func newCmdSeedBase(g *globals) *cobra.Command {
	var tar, ref, suite, arch string
	cmd := &cobra.Command{
		Use:    "seed-base --tar ROOTFS.tar --ref REGISTRY/library/debian:SUITE-slim --suite SUITE [--arch arm64]",
		Short:  "Push a debootstrapped root file system as a Debian base image (used by set-up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			img, err := baseimage.Image(tar, suite, arch)
			if err != nil {
				return err
			}
			push := baseimage.Push
			if arch != "" {
				// another platform of the same base: one index for all
				push = baseimage.AddToIndex
			}
			d, err := push(cmd.Context(), img, ref)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s@%s\n", ref, d)
			return nil
		},
	}
	cmd.Flags().StringVar(&tar, "tar", "", "tar of the root file system")
	cmd.Flags().StringVar(&ref, "ref", "", "image reference to push")
	cmd.Flags().StringVar(&suite, "suite", "bookworm", "Debian suite")
	cmd.Flags().StringVar(&arch, "arch", "", "the root file system's architecture (arm64): added to ref's index beside its other platforms; empty: ref is this amd64 image alone")
	cmd.MarkFlagRequired("tar")
	cmd.MarkFlagRequired("ref")
	return cmd
}
