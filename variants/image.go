package variants

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// CheckImageRef reports whether ref is a valid image reference:
// [registry/]repository[:tag][@sha256:digest], Docker Hub when no
// registry is named.
func CheckImageRef(ref string) error {
	if _, err := name.ParseReference(ref); err != nil {
		return fmt.Errorf("image %q is not a valid reference ([registry/]repository[:tag][@sha256:<64 hex digits>]): %v", ref, err)
	}
	return nil
}

var redisTagRE = regexp.MustCompile(`^([0-9]+\.[0-9]+\.[0-9]+)(?:-|$)`)

// RedisFromImage is the Redis version an image reference's tag names, for
// the repositories known to tag by version (Docker Hub's redis, and any
// repository whose last path component is redis): redis:7.0.15 and
// redis:7.0.15-alpine give 7.0.15; a moving tag (redis:7.0, latest) or a
// digest gives "", and the version is then read from the pulled image.
func RedisFromImage(ref string) string {
	r, err := name.ParseReference(ref)
	if err != nil {
		return ""
	}
	t, ok := r.(name.Tag)
	if !ok {
		if i := strings.LastIndex(ref, "@"); i > 0 {
			if t2, err := name.NewTag(ref[:i]); err == nil {
				t, ok = t2, true
			}
		}
		if !ok {
			return ""
		}
	}
	repo := t.RepositoryStr()
	if repo != "redis" && !strings.HasSuffix(repo, "/redis") {
		return ""
	}
	if m := redisTagRE.FindStringSubmatch(t.TagStr()); m != nil {
		return m[1]
	}
	return ""
}
