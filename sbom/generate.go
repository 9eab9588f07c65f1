package sbom

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/variants"
)

// In-toto statement fields of BuildKit's SBOM bundle: each file the
// generator writes is a statement whose predicate is an SPDX document.
const (
	StatementType     = "https://in-toto.io/Statement/v0.1"
	PredicateSPDX     = "https://spdx.dev/Document"
	PredicateSLSA1    = "https://slsa.dev/provenance/v1"
	PredicateSLSA02   = "https://slsa.dev/provenance/v0.2"
	CoreName          = "sbom" // BuildKit's name for the final image's scan
	generatorTool     = "redis-variants-sbom"
	namespacePrefixed = "https://redis-variants.invalid/spdx/"
)

// Statement is an in-toto statement with an SPDX predicate.
type Statement struct {
	Type          string    `json:"_type"`
	PredicateType string    `json:"predicateType"`
	Subject       []Subject `json:"subject"`
	Predicate     Document  `json:"predicate"`
}

// Subject is an in-toto subject.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Env is the generator protocol's environment (os.Getenv, or a map in
// tests).
type Env func(string) string

// ParamsFromEnv reads the params BuildKit passes as BUILDKIT_SCAN_<KEY>.
func ParamsFromEnv(env Env) Params {
	return Params{
		RedisSHA256: env("BUILDKIT_SCAN_" + ParamRedisSHA256),
		RedisSource: env("BUILDKIT_SCAN_" + ParamRedisSource),
		Variant:     env("BUILDKIT_SCAN_" + ParamVariant),
		Allocator:   env("BUILDKIT_SCAN_" + ParamAllocator),
	}
}

// Generate follows BuildKit's SBOM generator protocol: it scans the
// filesystem BUILDKIT_SCAN_SOURCE names and every one in the folder
// BUILDKIT_SCAN_SOURCE_EXTRAS names (the stages marked
// BUILDKIT_SBOM_SCAN_STAGE), and writes one statement per filesystem to
// BUILDKIT_SCAN_DESTINATION/<name>.spdx.json, named by the filesystem's
// folder. It returns the files written.
func Generate(env Env, version string, now time.Time) ([]string, error) {
	dest, src := env("BUILDKIT_SCAN_DESTINATION"), env("BUILDKIT_SCAN_SOURCE")
	if dest == "" || src == "" {
		return nil, fmt.Errorf("%s runs inside BuildKit as an SBOM generator (attest:sbom=generator=IMAGE): BUILDKIT_SCAN_DESTINATION and BUILDKIT_SCAN_SOURCE must be set", generatorTool)
	}
	roots := []string{src}
	if extras := env("BUILDKIT_SCAN_SOURCE_EXTRAS"); extras != "" {
		ents, err := os.ReadDir(extras)
		if err == nil {
			for _, e := range ents {
				if e.IsDir() {
					roots = append(roots, filepath.Join(extras, e.Name()))
				}
			}
		}
	}
	prm := ParamsFromEnv(env)
	var written []string
	for _, root := range roots {
		name := filepath.Base(root)
		doc, err := Scan(root, Options{
			Name:      name,
			Namespace: fmt.Sprintf("%s%s/%s/%d", namespacePrefixed, orName(prm.Variant), name, now.UnixNano()),
			Created:   now.UTC().Format(time.RFC3339),
			Tool:      generatorTool + "-" + version,
			Params:    prm,
		})
		if err != nil {
			return written, fmt.Errorf("scanning %s: %w", name, err)
		}
		body, err := json.MarshalIndent(Statement{Type: StatementType, PredicateType: PredicateSPDX, Subject: []Subject{}, Predicate: *doc}, "", "  ")
		if err != nil {
			return written, err
		}
		out := filepath.Join(dest, name+".spdx.json")
		if err := os.WriteFile(out, body, 0o644); err != nil {
			return written, err
		}
		written = append(written, out)
	}
	return written, nil
}

func orName(s string) string {
	if s == "" {
		return "image"
	}
	return s
}

// Attrs are the frontend attributes of an attested push of v built from
// the source archive of sha256 sha: BuildKit's SLSA provenance in mode
// max, and SBOMs by generator, told the archive, where it came from (the
// source's URL or the fallback of that checksum), the variant and the
// allocator its spec asks for (recorded beside what the scan finds).
func Attrs(generator string, v variants.Variant, sha string) map[string]string {
	fields := []string{"generator=" + generator}
	add := func(k, val string) {
		if val != "" {
			fields = append(fields, k+"="+val)
		}
	}
	add(ParamRedisSHA256, sha)
	add(ParamRedisSource, v.Source.Location(sha))
	add(ParamVariant, v.Name)
	add(ParamAllocator, v.Allocator)
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(fields)
	w.Flush()
	return map[string]string{"attest:provenance": "mode=max", "attest:sbom": strings.TrimSpace(b.String())}
}
