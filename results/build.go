package results

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"time"

	"github.com/redis-variants/redis-variants/variants"
)

// BuildRel is the path of name's build record inside a run folder.
func BuildRel(name string) string { return filepath.Join("builds", name+".json") }

// Pulled is what Docker Engine has after a pull: the image as it runs
// here and where it came from.
type Pulled struct {
	Ref      string            `json:"ref"`      // as named (redis:7.0.15)
	Resolved string            `json:"resolved"` // fully qualified (index.docker.io/library/redis:7.0.15)
	Digest   string            `json:"digest"`   // the manifest digest the registry served (sha256:…)
	ID       string            `json:"id"`       // Docker Engine's image ID (config digest)
	Platform string            `json:"platform"` // os/architecture[/variant] of the image
	Env      []string          `json:"env,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// Build is the outcome of building (or pulling) one entry, written by the
// builder to builds/<name>.json (BuildRel).
type Build struct {
	Variant      variants.Variant `json:"variant"`
	Image        string           `json:"image"`         // Docker Engine reference, "redis-variants/<name>:<variant ID>"
	ConfigDigest string           `json:"config_digest"` // image config digest (== docker image ID)
	Status       string           `json:"status"`        // "ok", "failed", "skipped"
	Error        string           `json:"error,omitempty"`
	LogTail      []string         `json:"log_tail,omitempty"`
	Log          string           `json:"log"` // path of the full build log (runs/<id>/logs/<name>.log)
	Duration     time.Duration    `json:"duration"`
	// Builder is the buildkitd address that built it, when a pool of
	// several did; Retried the builders that went away while building it.
	Builder     string            `json:"builder,omitempty"`
	Retried     []string          `json:"retried,omitempty"`
	CachedSteps int               `json:"cached_steps"`
	Size        int64             `json:"size,omitempty"` // the image's size in bytes (Docker Engine's, uncompressed)
	TotalSteps  int               `json:"total_steps"`
	Labels      map[string]string `json:"labels,omitempty"`
	Finished    time.Time         `json:"finished"`

	// UpToDate is true when the image was already in Docker Engine with
	// the same variant ID and recipe digest, so nothing was solved.
	UpToDate bool `json:"uptodate,omitempty"`
	// Target is the Dockerfile stage built.
	Target string `json:"target,omitempty"`
	// Recipe is the recipe digest (label io.redis-variants.recipe).
	Recipe string `json:"recipe,omitempty"`
	// BuildInfo is the image's own build record (dockerfiles.BuildInfoPath):
	// the real `cc --version`, flags, Redis's make settings, build CPU.
	BuildInfo json.RawMessage `json:"build_info,omitempty"`
	// BuildKitConfig is the config digest BuildKit exported (Docker Engine
	// 20.10 may store the image under another ID: ConfigDigest).
	BuildKitConfig string `json:"buildkit_config,omitempty"`
	// Pushed and OCI are where else the image was exported, when asked.
	Pushed string `json:"pushed,omitempty"`
	OCI    string `json:"oci,omitempty"`
	// PushedDigest is the digest of what was pushed (an image index when
	// Attested: the image with BuildKit's attestation manifest holding its
	// SLSA provenance and SBOMs).
	PushedDigest string `json:"pushed_digest,omitempty"`
	Attested     bool   `json:"attested,omitempty"`

	// Origin says how the image came to be: OriginBuilt, OriginPulled, or
	// OriginRebuilt (an official reference no registry had, rebuilt from
	// its recipe; PullError says why the pull failed).
	Origin    string  `json:"origin,omitempty"`
	Pulled    *Pulled `json:"pulled,omitempty"`
	PullError string  `json:"pull_error,omitempty"`
	// Server is where the image keeps redis-server (pulled images: found
	// by looking; built ones: where the recipe puts it).
	Server string `json:"server,omitempty"`
	// PGO is the profile a profile-guided build was optimised with.
	PGO *Profile `json:"pgo,omitempty"`
}

// Profile is a PGO build's training profile, exported into the run folder
// at pgo/<name>/ (PGORel) by the build.
type Profile struct {
	Dir      string `json:"dir"`      // the exported folder: the profile, profile.sha256, training.csv
	File     string `json:"file"`     // the merged profile (clang: redis.profdata; gcc: redis.gcda.tar)
	SHA256   string `json:"sha256"`   // of File; also label io.redis-variants.pgo.profile
	Bytes    int64  `json:"bytes"`    // File's size
	Training string `json:"training"` // the training's generator figures (CSV)
	// From is the registry artifact (by digest) the profile was pulled
	// from instead of training (build --profiles-from); Stored is where
	// this build stored the profile it trained (build --profiles-to).
	From   string `json:"from,omitempty"`
	Stored string `json:"stored,omitempty"`
	// TrainedOn is the CPU the profile was trained on (this machine's,
	// unless it was pulled); label io.redis-variants.pgo.trained-on.
	TrainedOn string `json:"trained_on,omitempty"`
}

// PGORel is the run-folder path of name's exported PGO profile.
func PGORel(name string) string { return filepath.Join("pgo", name) }

// LoadBuilds reads every build record of run (builds/*.json), keyed by
// entry name, with LoadDir's policy: a bad file is left out and named.
func LoadBuilds(r *Run) (map[string]Build, []Skipped, error) {
	return loadByName(r, "builds", func(b *Build) error {
		if b.Variant.Name == "" && b.Status == "" {
			return errors.New("not a build record")
		}
		return nil
	}, func(b *Build) string { return b.Variant.Name })
}

// LoadVerifications reads every verification of run (verify/*.json),
// keyed by entry name, with LoadDir's policy.
func LoadVerifications(r *Run) (map[string]Verification, []Skipped, error) {
	return loadByName(r, "verify", func(v *Verification) error {
		if v.Variant == "" || v.Status == "" {
			return errors.New("not a verification record")
		}
		return nil
	}, func(v *Verification) string { return v.Variant })
}
