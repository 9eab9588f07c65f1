// Package artifact carries a run's results through an OCI registry: the
// ranking, reports, trials, machine description and plan of one run folder
// packed as an OCI artifact of its own type, pushed by digest and attached
// to a published image as an OCI 1.1 referrer (its manifest's subject is the
// image). Registries without the referrers API (the Distribution registry
// 2.8 this project runs is one) are served by the referrers tag schema: the
// index tagged sha256-<image digest> lists the artifacts, which
// go-containerregistry keeps up to date on push and reads on lookup.
//
// The artifact is an OCI image manifest with artifactType ArtifactType, the
// empty config, and one layer per top-level file (its path in the
// org.opencontainers.image.title annotation, as ORAS writes files) plus one
// tar+gzip layer per record folder (builds/, verify/, trials/, pairs/).
// Pull writes them back as a run folder, atomically.
package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/results"
)

// The artifact's types and annotations.
const (
	// ArtifactType is the manifest's artifactType: a run's results.
	ArtifactType = "application/vnd.redis-variants.results.v1"
	// Schema is the layout version written, in AnnotationSchema; Pull
	// refuses any other.
	Schema = "1"

	MediaTypeJSON     = "application/vnd.redis-variants.results.file.v1+json"
	MediaTypeMarkdown = "text/markdown"
	MediaTypeCSV      = "text/csv"
	MediaTypeHTML     = "text/html"
	MediaTypeFile     = "application/octet-stream"
	MediaTypeDir      = "application/vnd.redis-variants.results.dir.v1.tar+gzip"

	AnnotationSchema  = "io.redis-variants.results.schema"
	AnnotationRun     = "io.redis-variants.run"
	AnnotationCPU     = "io.redis-variants.cpu"
	AnnotationLevel   = "io.redis-variants.x86-64-level"
	AnnotationTitle   = "org.opencontainers.image.title"
	AnnotationCreated = "org.opencontainers.image.created"
	// AnnotationUnpack marks a folder layer, as ORAS marks them.
	AnnotationUnpack = "io.deis.oras.content.unpack"
)

// Limits on what a results artifact may hold. An artifact is read from a
// registry someone else may write to: Pull refuses one over these limits
// before reading it, and reads no more than the manifest declares, so a
// hostile or broken artifact cannot fill memory or the disk. Pack refuses
// to write an artifact Pull would refuse.
const (
	MaxLayers   = 64        // layers in one artifact
	MaxBlob     = 128 << 20 // bytes of one layer as stored
	MaxUnpacked = 1 << 30   // bytes a pull writes, folder layers unpacked
)

// folders are the run folder's record folders, each carried as one
// tar+gzip layer. Build logs (logs/) and PGO profiles (pgo/) stay behind:
// they are large, and the records name what they held.
var folders = []string{"builds", "verify", results.TrialsDir, results.PairsDir}

// skipped top-level files: published.json changes after the push (it records
// it) and is the publisher's own, not a result.
var skipped = []string{results.PublishedFile}

// Bundle is a run's results ready to push: the layers and the manifest
// annotations, without a subject.
type Bundle struct {
	Run         string // run ID (the folder's name)
	Layers      []v1.Layer
	Descriptors []v1.Descriptor // one per layer, with its title
	Annotations map[string]string
}

// Pack reads run's results. The run must have been ranked (ranking.json):
// an artifact without a ranking would answer nothing.
func Pack(run *results.Run) (*Bundle, error) {
	if !run.Exists(results.RankingFile) {
		return nil, fmt.Errorf("packing %s: no %s (rank the run first)", run.Dir, results.RankingFile)
	}
	b := &Bundle{Run: filepath.Base(run.Dir), Annotations: map[string]string{
		AnnotationSchema:  Schema,
		AnnotationRun:     filepath.Base(run.Dir),
		AnnotationCreated: time.Now().UTC().Format(time.RFC3339),
	}}
	if m, err := run.Machine(); err == nil {
		b.Annotations[AnnotationCPU] = m.CPUModel
		b.Annotations[AnnotationLevel] = m.Level
	}
	ents, err := os.ReadDir(run.Dir)
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", run.Dir, err)
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "."), slices.Contains(skipped, name):
		case e.IsDir() && slices.Contains(folders, name):
			data, err := tarGz(run.Path(name))
			if err != nil {
				return nil, fmt.Errorf("packing %s: %w", run.Path(name), err)
			}
			b.add(name+"/", data, MediaTypeDir, map[string]string{AnnotationUnpack: "true"})
		case e.Type().IsRegular():
			data, err := os.ReadFile(run.Path(name))
			if err != nil {
				return nil, fmt.Errorf("packing %s: %w", run.Path(name), err)
			}
			b.add(name, data, mediaTypeOf(name), nil)
		}
	}
	if len(b.Layers) > MaxLayers {
		return nil, fmt.Errorf("packing %s: %d layers, more than the %d an artifact may hold", run.Dir, len(b.Layers), MaxLayers)
	}
	for _, d := range b.Descriptors {
		if d.Size > MaxBlob {
			return nil, fmt.Errorf("packing %s: %s is %d bytes, more than the %d a results artifact layer may hold (pull would refuse it)", run.Dir, d.Annotations[AnnotationTitle], d.Size, MaxBlob)
		}
	}
	return b, nil
}

func (b *Bundle) add(title string, data []byte, mt types.MediaType, ann map[string]string) {
	l := static.NewLayer(data, mt)
	d, _ := l.Digest() // a static layer's digest is computed in memory and cannot fail
	a := map[string]string{AnnotationTitle: title}
	for k, v := range ann {
		a[k] = v
	}
	b.Layers = append(b.Layers, l)
	b.Descriptors = append(b.Descriptors, v1.Descriptor{MediaType: mt, Size: int64(len(data)), Digest: d, Annotations: a})
}

func mediaTypeOf(name string) types.MediaType {
	switch filepath.Ext(name) {
	case ".json":
		return MediaTypeJSON
	case ".md":
		return MediaTypeMarkdown
	case ".csv":
		return MediaTypeCSV
	case ".html":
		return MediaTypeHTML
	}
	return MediaTypeFile
}

// tarGz packs the regular files under dir (names starting with "." left
// out), with paths relative to dir's parent, in path order, with fixed
// modes and times so the same records give the same blob.
func tarGz(dir string) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	parent := filepath.Dir(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(parent, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
