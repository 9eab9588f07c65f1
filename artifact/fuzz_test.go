package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/redis-variants/redis-variants/results"
)

// FuzzManifest feeds the artifact reader arbitrary manifests, as a
// registry anyone may push to could serve them. It must not panic, and a
// manifest it accepts names only files inside the run folder, of the media
// types a results artifact holds, within the limits.
func FuzzManifest(f *testing.F) {
	run := fixtureRun(f, "20261201-100000", "AMD EPYC 9B14")
	b, err := Pack(run)
	if err != nil {
		f.Fatal(err)
	}
	raw, err := b.Manifest(v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 10, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"schemaVersion":2,"artifactType":"` + ArtifactType + `","annotations":{"` + AnnotationSchema + `":"1","` + AnnotationRun + `":"r"},"layers":[{"mediaType":"` + MediaTypeDir + `","size":1,"digest":"sha256:` + strings.Repeat("a", 64) + `","annotations":{"` + AnnotationTitle + `":"../x/"}}]}`))
	f.Add([]byte(`{}`))
	ref, _ := name.NewDigest("registry.example.com/r@sha256:" + strings.Repeat("ab", 32))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := v1.ParseManifest(bytes.NewReader(data))
		if err != nil {
			return
		}
		a := &Artifact{Ref: ref, Manifest: m}
		if a.check() != nil {
			return
		}
		if a.Run() == "" || strings.ContainsAny(a.Run(), `/\`) {
			t.Fatalf("accepted run ID %q", a.Run())
		}
		root := "/runs/r"
		var total int64
		for _, l := range m.Layers {
			title, err := safeTitle(l)
			if err != nil {
				t.Fatalf("check accepted a layer safeTitle refuses: %v", err)
			}
			p := filepath.Join(root, title)
			if rel, err := filepath.Rel(root, p); err != nil || rel == "." || strings.HasPrefix(rel, "..") || strings.Contains(rel, "/") {
				t.Fatalf("title %q lands at %s, not a file directly in the run folder", l.Annotations[AnnotationTitle], p)
			}
			if l.Size < 0 || l.Size > MaxBlob {
				t.Fatalf("accepted a layer of %d bytes", l.Size)
			}
			total += l.Size
		}
		if len(m.Layers) > MaxLayers || total > MaxUnpacked {
			t.Fatalf("accepted %d layers of %d bytes in all", len(m.Layers), total)
		}
	})
}

// FuzzUntarGz feeds a folder layer's unpacker arbitrary bytes. It must not
// panic; whatever it writes lies inside the layer's folder, and it writes
// no more than its budget.
func FuzzUntarGz(f *testing.F) {
	run := fixtureRun(f, "20261201-100000", "AMD EPYC 9B14")
	data, err := tarGz(run.Path(results.TrialsDir))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, "trials")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range []string{"trials/../../escape", "trials/a/b.json", "/etc/passwd", "trials"} {
		tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: 3})
		tw.Write([]byte("abc"))
	}
	tw.WriteHeader(&tar.Header{Name: "trials/link", Typeflag: tar.TypeSymlink, Linkname: "/etc"})
	tw.Close()
	zw.Close()
	f.Add(buf.Bytes(), "trials")
	const limit = 64 << 10
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		if _, err := safeTitle(v1.Descriptor{MediaType: MediaTypeDir, Annotations: map[string]string{AnnotationTitle: folder + "/"}}); err != nil {
			return // Pull unpacks only under a title it accepted
		}
		folder = filepath.Clean(folder)
		root := t.TempDir()
		budget := int64(limit)
		untarGz(data, root, folder, &budget)
		if budget < 0 {
			t.Fatalf("budget went to %d", budget)
		}
		var written int64
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if rel != folder && !strings.HasPrefix(rel, folder+"/") {
				t.Fatalf("wrote %s, outside %s/", rel, folder)
			}
			if d.Type()&fs.ModeSymlink != 0 {
				t.Fatalf("wrote a link %s", rel)
			}
			if i, err := d.Info(); err == nil && d.Type().IsRegular() {
				written += i.Size()
			}
			return nil
		})
		if written > limit || written != limit-budget {
			t.Fatalf("wrote %d bytes with a budget of %d (%d left)", written, limit, budget)
		}
	})
}
