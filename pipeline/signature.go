package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/results"
)

// Keygen writes a new ECDSA P-256 key pair as cosign does: prefix.key
// (encrypted with the password in COSIGN_PASSWORD) and prefix.pub. An
// existing file is not overwritten.
func Keygen(c Config, prefix string) error {
	priv, pub, err := publish.GenerateKeyPair([]byte(os.Getenv(publish.PasswordEnv)))
	if err != nil {
		return err
	}
	for _, f := range []string{prefix + ".key", prefix + ".pub"} {
		if _, err := os.Stat(f); err == nil {
			return fmt.Errorf("%s exists: keygen does not overwrite a key", f)
		}
	}
	if err := results.WriteFileMode(prefix+".key", priv, 0o600); err != nil {
		return err
	}
	if err := results.WriteFile(prefix+".pub", pub); err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "wrote %s.key (encrypted with $%s) and %s.pub\n", prefix, publish.PasswordEnv, prefix)
	return nil
}

// SignImages signs each image reference (a tag is resolved to its digest
// first: the signature is the digest's) with the key in keyFile.
func SignImages(ctx context.Context, c Config, keyFile string, refs []string, insecure bool) error {
	s, err := publish.LoadSigner(keyFile)
	if err != nil {
		return err
	}
	opts := publish.ReadOptions(ctx)
	for _, r := range refs {
		ref, err := publish.Reference(r, insecure)
		if err != nil {
			return err
		}
		d, err := publish.ResolveDigest(ctx, ref, opts...)
		if err != nil {
			return err
		}
		if err := publish.Sign(ctx, d, s, nil, opts...); err != nil {
			return err
		}
		fmt.Fprintf(c.Out, "signed %s\n", d)
	}
	return nil
}

// VerifySignatures checks each image reference against the public key in
// keyFile, printing one line (or, with asJSON, one JSON object) per image.
// Every image is checked; the error names those that failed.
func VerifySignatures(ctx context.Context, c Config, keyFile string, refs []string, insecure, asJSON bool) error {
	v, err := publish.LoadVerifier(keyFile)
	if err != nil {
		return err
	}
	opts := publish.ReadOptions(ctx)
	var failed []error
	for _, r := range refs {
		ref, err := publish.Reference(r, insecure)
		if err != nil {
			return err
		}
		ok, err := publish.Verify(ctx, ref, v, opts...)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", r, err))
			if !asJSON {
				fmt.Fprintf(c.Out, "FAIL %s: %v\n", r, err)
			}
			continue
		}
		if asJSON {
			js, _ := json.Marshal(ok)
			fmt.Fprintf(c.Out, "%s\n", js)
		} else {
			fmt.Fprintf(c.Out, "ok   %s: %s signed by this key (%s)\n", r, ok.Digest, ok.Signature)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d image(s) failed verification: %w", len(failed), len(refs), errors.Join(failed...))
	}
	return nil
}
