package publish

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/redis-variants/redis-variants/artifact"
)

// faultProxy stands in front of the real Distribution registry and lets
// fault decide, per request, to answer it itself (a 500, a hang) instead
// of passing it on. It counts what it did.
type faultProxy struct {
	srv      *httptest.Server
	injected atomic.Int32
}

// fault returns true when it answered the request itself.
type fault func(w http.ResponseWriter, r *http.Request, body []byte) bool

func newFaultProxy(t *testing.T, f fault) *faultProxy {
	t.Helper()
	if resp, err := http.Get("http://" + localRegistry + "/v2/"); err != nil {
		t.Fatalf("this test needs the Distribution registry at %s (scripts/setup.sh starts it): %v", localRegistry, err)
	} else {
		resp.Body.Close()
	}
	target, _ := url.Parse("http://" + localRegistry)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = nil
	p := &faultProxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if f(w, r, body) {
			p.injected.Add(1)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *faultProxy) addr() string { return strings.TrimPrefix(p.srv.URL, "http://") }

func fail500(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`{"errors":[{"code":"UNKNOWN","message":"injected failure"}]}`))
}

// hang holds the request until the client gives up (or the test ends).
func hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
}

func isManifestPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/")
}

func isResultsPut(r *http.Request, body []byte) bool {
	return isManifestPut(r) && bytes.Contains(body, []byte(artifact.ArtifactType))
}

func isTagPut(r *http.Request) bool {
	return isManifestPut(r) && !strings.Contains(r.URL.Path, "/manifests/sha256:")
}

// tagsIn lists repo's tags on the real registry, the referrers fallback
// tags (sha256-…) left out.
func tagsIn(t *testing.T, repo string) []string {
	t.Helper()
	r, _ := name.NewRepository(localRegistry + "/" + repo)
	tags, err := remote.List(r)
	if err != nil {
		return nil // no such repository: nothing was ever pushed
	}
	var out []string
	for _, tag := range tags {
		if !strings.HasPrefix(tag, "sha256-") {
			out = append(out, tag)
		}
	}
	return out
}

// The registry failing in the middle of a push, tried against the real
// Distribution registry through a proxy that injects the fault. A
// transient failure (a few 500s, a hang shorter than the retries) is
// retried with backoff and the publication completes; a lasting one ends
// in an error that names it, after the retries, with no tag written for
// an image whose manifest and results were not both confirmed, and the
// failure recorded in published.json.
func TestPublishRegistryFaults(t *testing.T) {
	vs := standardFixture[:1] // one image, two tags
	src, cfgs := sourceFor(t, vs)
	cases := []struct {
		name    string
		fault   func(n *atomic.Int32) fault
		ok      bool
		wantErr string
	}{
		{"500 on the first two blob uploads", func(n *atomic.Int32) fault {
			return func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
				if strings.Contains(r.URL.Path, "/blobs/uploads/") && r.Method != http.MethodGet && n.Add(1) <= 2 {
					fail500(w)
					return true
				}
				return false
			}
		}, true, ""},
		{"a hang on the first tag PUT (the referrers index)", func(n *atomic.Int32) fault {
			return func(w http.ResponseWriter, r *http.Request, _ []byte) bool {
				if isTagPut(r) && n.Add(1) == 1 {
					hang(r)
					return true
				}
				return false
			}
		}, true, ""},
		{"500 on every results push", func(n *atomic.Int32) fault {
			return func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if isResultsPut(r, body) {
					n.Add(1)
					fail500(w)
					return true
				}
				return false
			}
		}, false, "attaching the results"},
		{"a hang on every image manifest", func(n *atomic.Int32) fault {
			return func(w http.ResponseWriter, r *http.Request, body []byte) bool {
				if isManifestPut(r) && !isResultsPut(r, body) {
					n.Add(1)
					hang(r)
					return true
				}
				return false
			}
		}, false, "timeout awaiting response headers (gave up after 2 attempts)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var n atomic.Int32
			proxy := newFaultProxy(t, c.fault(&n))
			run := writeFixture(t, vs, cfgs)
			opts := testOptions(proxy.addr(), src)
			opts.Repo = "fault-test-" + randomHex(4) + "/redis"
			// long enough that no request but the hung one times out on a
			// loaded machine (-race, stolen CPU): the second attempt must
			// reach the hung manifest PUT for the retry to be seen
			opts.RequestTimeout = 3 * time.Second
			opts.Attempts = 2
			start := time.Now()
			pub, err := Publish(context.Background(), run, opts)
			t.Logf("%s: %d faults injected, %v, error: %v", c.name, proxy.injected.Load(), time.Since(start).Round(time.Millisecond), err)
			if proxy.injected.Load() == 0 {
				t.Fatal("no fault was injected: the test tried nothing")
			}
			tags := tagsIn(t, opts.Repo)
			recs, _ := Load(run)
			if len(recs) != 1 || len(recs[0].Images) != 1 {
				t.Fatalf("published.json: %+v, want one publication of one image", recs)
			}
			rec := recs[0].Images[0]
			if c.ok {
				if err != nil {
					t.Fatalf("a transient fault was not retried: %v", err)
				}
				if len(tags) != 2 || len(pub.Images[0].Pushed) != 2 || pub.Images[0].Results == "" || rec.Error != "" {
					t.Errorf("tags %v, pushed %v, results %q, recorded error %q: want both tags with their results", tags, pub.Images[0].Pushed, pub.Images[0].Results, rec.Error)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("a lasting fault: %v, want an error saying %q", err, c.wantErr)
			}
			if n.Load() < 2 {
				t.Errorf("the failing request was tried %d times: not retried", n.Load())
			}
			if len(tags) != 0 || len(rec.Pushed) != 0 {
				t.Errorf("tags %v written (pushed %v) though the image's manifest or results were not confirmed", tags, rec.Pushed)
			}
			if rec.Error == "" {
				t.Errorf("published.json does not record the failure: %+v", rec)
			}
		})
	}
}
