// Command redis-variants-sbom is the SBOM generator of redis-variants'
// attested builds: BuildKit runs it (attest:sbom=generator=IMAGE) with the
// built image's root filesystem and the build stages marked
// BUILDKIT_SBOM_SCAN_STAGE mounted read-only, and it writes an SPDX
// document for each (package sbom). Outside BuildKit, `redis-variants-sbom
// scan ROOT` prints the document for a filesystem.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/redis-variants/redis-variants/sbom"
)

// version is the generator's version, recorded as the documents' creator.
const version = "1"

func main() {
	if len(os.Args) == 3 && os.Args[1] == "scan" {
		doc, err := sbom.Scan(os.Args[2], sbom.Options{Name: os.Args[2], Namespace: "https://redis-variants.invalid/spdx/local", Created: time.Now().UTC().Format(time.RFC3339), Tool: "redis-variants-sbom-" + version})
		if err != nil {
			fmt.Fprintln(os.Stderr, "redis-variants-sbom:", err)
			os.Exit(1)
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(doc)
		return
	}
	files, err := sbom.Generate(os.Getenv, version, time.Now())
	for _, f := range files {
		fmt.Println("wrote", f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "redis-variants-sbom:", err)
		os.Exit(1)
	}
}
