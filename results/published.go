package results

import "time"

// The publication record: what publish appends to published.json
// (PublishedFile), one entry per publication of the run.

// Published is one publication of a run: what was pushed where.
type Published struct {
	Run        string           `json:"run"`
	Registry   string           `json:"registry"`
	Repository string           `json:"repository"` // e.g. 127.0.0.1:5000/redis-variants
	Runtime    string           `json:"runtime"`
	DryRun     bool             `json:"dry_run,omitempty"`
	Images     []PublishedImage `json:"images"`
	Refused    []Refusal        `json:"refused,omitempty"`
	Warnings   []string         `json:"warnings,omitempty"`
	Finished   time.Time        `json:"finished"`
}

// PublishedImage is one published (or, on a dry run, publishable) image.
type PublishedImage struct {
	Variant  string `json:"variant"`
	ID       string `json:"id"`
	Rank     int    `json:"rank"`
	Level    string `json:"isa_level,omitempty"`
	Source   string `json:"source"`    // Docker Engine reference
	SourceID string `json:"source_id"` // its config digest (docker image ID) as built and measured
	// Ref is repository@digest of the pushed manifest; Digest its digest.
	// Both are empty on a dry run.
	Ref    string `json:"ref,omitempty"`
	Digest string `json:"digest,omitempty"`
	// Results is repository@digest of the run's results artifact attached
	// to the image (its subject), empty when none was.
	Results string `json:"results,omitempty"`
	// Signatures are the signature images written for the image and its
	// results artifact (cosign's sha256-<hex>.sig tags), when signed.
	Signatures []string `json:"signatures,omitempty"`
	// Tags are the full tag references planned; Pushed those written and
	// read back with the right digest.
	Tags   []string `json:"tags"`
	Pushed []string `json:"pushed,omitempty"`
	// Platforms are the builds of the same spec for other platforms
	// (arm64 twins) pushed beside the image; with any, Index is
	// repository@digest of the multi-platform index naming the image and
	// them, which the tags then point at, and IndexResults the results
	// artifact attached to the index.
	Platforms    []PlatformImage   `json:"platforms,omitempty"`
	Index        string            `json:"index,omitempty"`
	IndexResults string            `json:"index_results,omitempty"`
	Annotations  map[string]string `json:"annotations"` // also the labels added to the image config
	Error        string            `json:"error,omitempty"`
}

// PlatformImage is a twin of a published image: its spec built for
// another platform, verified, pushed by digest beside it.
type PlatformImage struct {
	Variant    string   `json:"variant"`
	ID         string   `json:"id"`
	Platform   string   `json:"platform"`
	Source     string   `json:"source"`    // Docker Engine reference
	SourceID   string   `json:"source_id"` // its config digest as built and verified
	Ref        string   `json:"ref,omitempty"`
	Digest     string   `json:"digest,omitempty"`
	Signatures []string `json:"signatures,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// Publications is the content of published.json.
type Publications struct {
	Publications []Published `json:"publications"`
}

// Refusal is a variant that was asked for (or ranked high enough) but may
// not be published, and why.
type Refusal struct {
	Variant string `json:"variant"`
	Reason  string `json:"reason"`
}
