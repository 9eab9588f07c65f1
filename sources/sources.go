// Package sources is the content-addressed cache of source archives (Redis
// tarballs, toolchains): every file is stored as sha256/<hex> and is only
// ever written after its checksum matched. Fetch tries a source's URL, then
// its fallbacks: another http(s)/file URL, "debian:<pool path>" on the
// machine's own apt mirror, or "npm:<package>@<version>" from the npm
// registry.
package sources

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// Cache is a content-addressed folder: Dir/sha256/<hex>.
type Cache struct {
	Dir string
	// HTTP is the client used for downloads (default: 10 minute timeout).
	HTTP *http.Client
	// DebianMirror resolves "debian:" URLs (default: from the apt configuration).
	DebianMirror string
	// NPMRegistry resolves "npm:" URLs (default: from ~/.npmrc, else registry.npmjs.org).
	NPMRegistry string
}

// New returns the cache under dir.
func New(dir string) *Cache { return &Cache{Dir: dir} }

var hexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Path is where the file with this sha256 lives (whether or not it exists).
func (c *Cache) Path(sum string) string { return filepath.Join(c.Dir, "sha256", sum) }

// Has reports whether a file with this checksum is cached and still matches it.
func (c *Cache) Has(sum string) (bool, error) {
	got, err := fileSHA256(c.Path(sum))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return got == sum, nil
}

// Entry records where a cached source came from.
type Entry struct {
	Name    string    `json:"name"`
	SHA256  string    `json:"sha256"`
	From    string    `json:"from"`
	Size    int64     `json:"size"`
	Fetched time.Time `json:"fetched"`
}

// Resolve returns the checksum of whichever of src's candidates is cached,
// or an error naming the missing source and what to run.
func (c *Cache) Resolve(src variants.Source) (string, error) {
	for _, cand := range candidates(src) {
		if ok, _ := c.Has(cand.SHA256); ok {
			return cand.SHA256, nil
		}
	}
	return "", fmt.Errorf("source %q is not in the cache %s (run: redis-variants fetch)", src.Name, c.Dir)
}

// Fetch makes sure src is in the cache: its URL is tried first, then each
// fallback; every download is checked against the candidate's checksum
// before it enters the cache. It returns the entry for what is cached.
func (c *Cache) Fetch(ctx context.Context, src variants.Source) (Entry, error) {
	var errs []error
	for _, cand := range candidates(src) {
		if !hexRE.MatchString(cand.SHA256) {
			errs = append(errs, fmt.Errorf("%s: malformed sha256 %q", cand.URL, cand.SHA256))
			continue
		}
		if ok, _ := c.Has(cand.SHA256); ok {
			fi, _ := os.Stat(c.Path(cand.SHA256))
			return Entry{Name: src.Name, SHA256: cand.SHA256, From: cand.URL + " (cached)", Size: fi.Size()}, nil
		}
		e, err := c.fetchOne(ctx, src.Name, cand)
		if err == nil {
			return e, nil
		}
		if ctx.Err() != nil {
			return Entry{}, ctx.Err()
		}
		errs = append(errs, err)
	}
	return Entry{}, fmt.Errorf("fetching source %q: every place failed:\n  %w", src.Name, errors.Join(errs...))
}

func candidates(src variants.Source) []variants.Fallback {
	var out []variants.Fallback
	if src.Path != "" {
		out = append(out, variants.Fallback{URL: "file://" + src.Path, SHA256: src.SHA256})
	}
	if src.URL != "" {
		out = append(out, variants.Fallback{URL: src.URL, SHA256: src.SHA256})
	}
	return append(out, src.Fallbacks...)
}

func (c *Cache) fetchOne(ctx context.Context, name string, cand variants.Fallback) (Entry, error) {
	u, err := c.resolveURL(ctx, cand.URL)
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %w", cand.URL, err)
	}
	rc, err := c.open(ctx, u)
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %w", cand.URL, err)
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Join(c.Dir, "sha256"), 0o755); err != nil {
		return Entry{}, err
	}
	tmp, err := os.CreateTemp(filepath.Join(c.Dir, "sha256"), ".fetch-*")
	if err != nil {
		return Entry{}, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), rc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Entry{}, fmt.Errorf("%s: downloading: %w", cand.URL, err)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != cand.SHA256 {
		return Entry{}, fmt.Errorf("%s: sha256 mismatch: got %s, want %s", cand.URL, got, cand.SHA256)
	}
	if err := os.Rename(tmp.Name(), c.Path(got)); err != nil {
		return Entry{}, err
	}
	e := Entry{Name: name, SHA256: got, From: cand.URL, Size: n, Fetched: time.Now().UTC()}
	b, _ := json.MarshalIndent(e, "", "  ")
	_ = results.WriteFile(c.Path(got)+".json", append(b, '\n'))
	return e, nil
}

// resolveURL turns debian: and npm: URLs into http(s) ones.
func (c *Cache) resolveURL(ctx context.Context, raw string) (string, error) {
	switch {
	case strings.HasPrefix(raw, "debian:"):
		m := c.DebianMirror
		if m == "" {
			m = AptMirror()
		}
		return strings.TrimSuffix(m, "/") + "/" + strings.TrimPrefix(strings.TrimPrefix(raw, "debian:"), "/"), nil
	case strings.HasPrefix(raw, "npm:"):
		return c.npmTarball(ctx, strings.TrimPrefix(raw, "npm:"))
	}
	return raw, nil
}

func (c *Cache) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	return &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext, TLSHandshakeTimeout: 10 * time.Second,
	}}
}

func (c *Cache) open(ctx context.Context, raw string) (io.ReadCloser, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "file":
		return os.Open(u.Path)
	case "http", "https":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.client().Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("HTTP %s", resp.Status)
		}
		return resp.Body, nil
	case "":
		return os.Open(raw)
	}
	return nil, fmt.Errorf("unsupported URL scheme %q", u.Scheme)
}

// npmTarball finds the tarball URL of pkg@version in the npm registry.
func (c *Cache) npmTarball(ctx context.Context, spec string) (string, error) {
	at := strings.LastIndex(spec, "@")
	if at <= 0 {
		return "", fmt.Errorf("npm source %q: want <package>@<version>", spec)
	}
	pkg, ver := spec[:at], spec[at+1:]
	reg := c.NPMRegistry
	if reg == "" {
		reg = NPMRegistry()
	}
	meta := strings.TrimSuffix(reg, "/") + "/" + strings.ReplaceAll(pkg, "/", "%2f") + "/" + ver
	rc, err := c.open(ctx, meta)
	if err != nil {
		return "", fmt.Errorf("npm metadata: %w", err)
	}
	defer rc.Close()
	var m struct {
		Dist struct {
			Tarball string `json:"tarball"`
		} `json:"dist"`
	}
	if err := json.NewDecoder(io.LimitReader(rc, 8<<20)).Decode(&m); err != nil {
		return "", fmt.Errorf("npm metadata: %w", err)
	}
	if m.Dist.Tarball == "" {
		return "", fmt.Errorf("npm metadata for %s has no tarball", spec)
	}
	return m.Dist.Tarball, nil
}

// AptMirror is the first non-security Debian mirror in the machine's apt
// configuration, else deb.debian.org.
func AptMirror() string {
	if b, err := os.ReadFile("/etc/apt/sources.list.d/debian.sources"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "URIs:" && !strings.Contains(f[1], "security") {
				return f[1]
			}
		}
	}
	if b, err := os.ReadFile("/etc/apt/sources.list"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "deb" && !strings.Contains(f[1], "security") {
				return f[1]
			}
		}
	}
	return "http://deb.debian.org/debian"
}

// NPMRegistry is the registry in ~/.npmrc, else registry.npmjs.org.
func NPMRegistry() string {
	home, _ := os.UserHomeDir()
	if b, err := os.ReadFile(filepath.Join(home, ".npmrc")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "registry" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "https://registry.npmjs.org"
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
