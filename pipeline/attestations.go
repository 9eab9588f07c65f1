package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/redis-variants/redis-variants/publish"
	"github.com/redis-variants/redis-variants/sbom"
)

// ShowAttestations reads the attestations an attested push left in the
// index ref names for platform and prints them on c.Out: with asJSON the
// whole of them (the SPDX documents and the provenance), else a summary
// per SBOM (each redis-server with the allocator it links, the source
// archive, the bundled dependencies, the package count) and the
// provenance's type and size.
func ShowAttestations(ctx context.Context, c Config, image, platform string, insecure, asJSON bool) error {
	ref, err := publish.Reference(image, insecure)
	if err != nil {
		return err
	}
	att, err := sbom.Read(ctx, ref, platform, publish.ReadOptions(ctx)...)
	if err != nil {
		return err
	}
	out := c.Out
	if asJSON {
		js, err := json.MarshalIndent(att, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", js)
		return err
	}
	fmt.Fprintf(out, "%s (%s)\nattestation manifest %s\nprovenance: %s, %d bytes\n", att.Image, att.Platform, att.Manifest, att.ProvType, len(att.Provenance))
	names := make([]string, 0, len(att.SBOMs))
	for n := range att.SBOMs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := att.SBOMs[n]
		fmt.Fprintf(out, "SBOM %s: %d packages (%s)\n", n, len(d.Packages), strings.Join(d.CreationInfo.Creators, ", "))
		for _, s := range d.Servers() {
			var links []string
			for _, typ := range []string{"STATIC_LINK", "DYNAMIC_LINK"} {
				for _, p := range d.Related(s, typ) {
					links = append(links, fmt.Sprintf("%s %s %s", strings.ToLower(strings.TrimSuffix(typ, "_LINK")), p.Name, p.VersionInfo))
				}
			}
			fmt.Fprintf(out, "  %s %s: allocator %s, %s; links %s\n", s.Fact(sbom.FactPath), s.VersionInfo, s.Fact(sbom.FactAllocator), s.Fact(sbom.FactLibc), strings.Join(links, ", "))
		}
		for _, src := range d.Find("redis") {
			sha := ""
			if len(src.Checksums) > 0 {
				sha = src.Checksums[0].Value
			}
			var deps []string
			for _, p := range d.Related(src, "CONTAINS") {
				deps = append(deps, strings.TrimSpace(p.Name+" "+p.VersionInfo))
			}
			fmt.Fprintf(out, "  source redis %s sha256 %s from %s; bundled: %s\n", src.VersionInfo, sha, src.DownloadLocation, strings.Join(deps, ", "))
		}
	}
	return nil
}
