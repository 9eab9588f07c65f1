package publish

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/redis-variants/redis-variants/results"
)

// compressionLevel is the gzip level of pushed layers. Docker save hands
// layers over uncompressed; compressing them is the costliest part of a
// publication, and variants share most layers, so each is compressed once
// per cache and the fastest level is used.
const compressionLevel = gzip.BestSpeed

// layerCache keeps the gzip compression of each layer in a folder, keyed by
// the layer's diff ID, so a layer shared by several variants (the base
// image, the runtime packages), or pushed to several registries, is
// compressed once and its digest is known without a second pass.
type layerCache struct{ dir string }

type layerMeta struct {
	DiffID string `json:"diff_id"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// layer returns l backed by its compressed copy in the cache, making the
// copy first when there is none. The uncompressed bytes are checked against
// l's diff ID as they are read.
func (c layerCache) layer(l v1.Layer) (v1.Layer, error) {
	diffID, err := l.DiffID()
	if err != nil {
		return nil, fmt.Errorf("reading a layer's diff ID: %w", err)
	}
	blob := filepath.Join(c.dir, diffID.Hex+".gz")
	metaPath := filepath.Join(c.dir, diffID.Hex+".json")
	var m layerMeta
	if b, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(b, &m) == nil && m.DiffID == diffID.String() {
		if fi, err := os.Stat(blob); err == nil && fi.Size() == m.Size {
			if d, err := v1.NewHash(m.Digest); err == nil {
				return &fileLayer{path: blob, digest: d, diffID: diffID, size: m.Size}, nil
			}
		}
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, err
	}
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("reading layer %s: %w", diffID, err)
	}
	defer rc.Close()
	f, err := os.CreateTemp(c.dir, ".layer-*")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	zsum := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, zsum)}
	zw, err := gzip.NewWriterLevel(cw, compressionLevel)
	if err != nil {
		return nil, err
	}
	usum := sha256.New()
	if _, err := io.Copy(zw, io.TeeReader(rc, usum)); err != nil {
		return nil, fmt.Errorf("compressing layer %s: %w", diffID, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing layer %s: %w", diffID, err)
	}
	if got := sumOf(usum); got != diffID.Hex {
		return nil, fmt.Errorf("layer %s: its content hashes to sha256:%s", diffID, got)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(f.Name(), blob); err != nil {
		return nil, err
	}
	ok = true
	digest := v1.Hash{Algorithm: "sha256", Hex: sumOf(zsum)}
	b, _ := json.Marshal(layerMeta{DiffID: diffID.String(), Digest: digest.String(), Size: cw.n})
	if err := results.WriteFile(metaPath, b); err != nil {
		return nil, err
	}
	return &fileLayer{path: blob, digest: digest, diffID: diffID, size: cw.n}, nil
}

func sumOf(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// fileLayer is a gzip-compressed layer in a file, with known digests.
type fileLayer struct {
	path           string
	digest, diffID v1.Hash
	size           int64
}

func (l *fileLayer) Digest() (v1.Hash, error)             { return l.digest, nil }
func (l *fileLayer) DiffID() (v1.Hash, error)             { return l.diffID, nil }
func (l *fileLayer) Size() (int64, error)                 { return l.size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error)  { return types.OCILayer, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error)   { return os.Open(l.path) }
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return gunzipFile(l.path) }

type gunzipReader struct {
	*gzip.Reader
	f *os.File
}

func (g gunzipReader) Close() error {
	g.Reader.Close()
	return g.f.Close()
}

func gunzipFile(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return gunzipReader{zr, f}, nil
}
