package main

import (
	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
)

func newCmdKeygen(g *globals) *cobra.Command {
	prefix := "cosign"
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Write a signing key pair (cosign's format): PREFIX.key, encrypted with $COSIGN_PASSWORD, and PREFIX.pub",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pipeline.Keygen(config(cmd, g), prefix)
		},
	}
	cmd.Flags().StringVar(&prefix, "prefix", prefix, "path of the key files without .key/.pub")
	return cmd
}

func newCmdSign(g *globals) *cobra.Command {
	var key string
	var insecure bool
	cmd := &cobra.Command{
		Use:   "sign IMAGE...",
		Short: "Sign images in a registry (cosign's key-based format), by digest",
		Long: `Sign each image's manifest digest (a tag is resolved first) with the private
key, writing the signature image sha256-<hex>.sig beside it as cosign does:
cosign verify --key KEY.pub and redis-variants verify-signature check it
offline. publish --sign signs what it pushes; this signs anything else, such
as an index build --push --attest wrote.`,
		Example: `  COSIGN_PASSWORD=... redis-variants sign --key cosign.key 127.0.0.1:5000/redis-variants:7.0.15-best`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.SignImages(cmd.Context(), config(cmd, g), key, args, insecure)
		},
	}
	cmd.Flags().StringVar(&key, "key", "cosign.key", "private key (password in COSIGN_PASSWORD)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "use plain HTTP for a registry that is not local")
	return cmd
}

func newCmdVerifySignature(g *globals) *cobra.Command {
	var key string
	var insecure, asJSON bool
	cmd := &cobra.Command{
		Use:   "verify-signature IMAGE...",
		Short: "Check that images carry a signature by a public key (cosign's key-based format), offline",
		Long: `Resolve each reference to its manifest digest and check the signature image
sha256-<hex>.sig beside it: a payload that names exactly that digest, signed
by the public key. A tag moved to another image, a signature copied to
another digest, a changed payload or another key fails. Exit status 1 when
any image fails.`,
		Example: `  redis-variants verify-signature --key cosign.pub 127.0.0.1:5000/redis-variants:7.0.15-best`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.VerifySignatures(cmd.Context(), config(cmd, g), key, args, insecure, asJSON)
		},
	}
	cmd.Flags().StringVar(&key, "key", "cosign.pub", "public key")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "use plain HTTP for a registry that is not local")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per verified image")
	return cmd
}

func newCmdAttestations(g *globals) *cobra.Command {
	var platform string
	var insecure, asJSON bool
	cmd := &cobra.Command{
		Use:   "attestations IMAGE",
		Short: "Read the provenance and SBOMs an attested push (build --push --attest) left in an image index",
		Long: `Find the image for --platform in the index IMAGE names and the attestation
manifest BuildKit attached to it, and print its SBOMs (each redis-server
with the allocator it links, the source archive, the bundled dependencies)
and the provenance's type; --json prints all of it.`,
		Example: `  redis-variants attestations 127.0.0.1:5000/redis-variants/clang16-o3-lto-pgo:9d136ff577ec`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pipeline.ShowAttestations(cmd.Context(), config(cmd, g), args[0], platform, insecure, asJSON)
		},
	}
	cmd.Flags().StringVar(&platform, "platform", "", "the platform's image whose attestations are read (linux/amd64, linux/arm64); needed only for an index of several platforms")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "use plain HTTP for a registry that is not local")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the SPDX documents and the provenance whole")
	return cmd
}
