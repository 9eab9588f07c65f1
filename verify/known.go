package verify

import (
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed known/*.yaml
var knownFS embed.FS

// KnownList is the versioned list of tests known to fail for one Redis
// major.minor version, embedded from known/redis-<version>.yaml.
type KnownList struct {
	Redis string         `yaml:"redis"`
	Known []KnownFailure `yaml:"known"`
}

// KnownFailure is one test known to fail, with why and where.
type KnownFailure struct {
	Unit       string   `yaml:"unit"`       // e.g. unit/memefficiency
	Test       string   `yaml:"test"`       // exact name, or "/regexp" like runtest's --only
	Reason     string   `yaml:"reason"`     // why it fails, shown in the report
	Allocators []string `yaml:"allocators"` // allocators it applies to (empty = all)
	Compilers  []string `yaml:"compilers"`  // compiler families it applies to (empty = all)
	Platforms  []string `yaml:"platforms"`  // image platforms it applies to, e.g. linux/arm64 under emulation (empty = all)

	re *regexp.Regexp
}

// LoadKnown returns the known-failures list for a Redis version ("7.0.15"
// uses redis-7.0.yaml). A version without a list gets an empty one.
func LoadKnown(redisVersion string) (*KnownList, error) {
	parts := strings.SplitN(redisVersion, ".", 3)
	if len(parts) < 2 {
		return nil, fmt.Errorf("known failures: redis version %q is not major.minor[.patch]", redisVersion)
	}
	file := "known/redis-" + parts[0] + "." + parts[1] + ".yaml"
	b, err := knownFS.ReadFile(file)
	if err != nil {
		return &KnownList{Redis: parts[0] + "." + parts[1]}, nil
	}
	return ParseKnown(file, b)
}

// ParseKnown parses a known-failures file; file names it in errors.
func ParseKnown(file string, b []byte) (*KnownList, error) {
	var l KnownList
	if err := yaml.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("known failures %s: %w", file, err)
	}
	for i := range l.Known {
		k := &l.Known[i]
		if k.Unit == "" || k.Test == "" || strings.TrimSpace(k.Reason) == "" {
			return nil, fmt.Errorf("known failures %s: entry %d: unit, test and reason are required", file, i+1)
		}
		if strings.HasPrefix(k.Test, "/") {
			re, err := regexp.Compile(k.Test[1:])
			if err != nil {
				return nil, fmt.Errorf("known failures %s: entry %d: test pattern %q: %w", file, i+1, k.Test, err)
			}
			k.re = re
		}
	}
	return &l, nil
}

// Match returns the entry that covers test name of unit for a build with
// allocator and compiler family, or nil.
func (l *KnownList) Match(unit, name, allocator, compiler string) *KnownFailure {
	if l == nil {
		return nil
	}
	for i := range l.Known {
		k := &l.Known[i]
		if unit != "" && k.Unit != unit {
			continue
		}
		if k.re != nil {
			if !k.re.MatchString(name) {
				continue
			}
		} else if k.Test != name {
			continue
		}
		if len(k.Allocators) > 0 && !slices.Contains(k.Allocators, allocator) {
			continue
		}
		if len(k.Compilers) > 0 && !slices.Contains(k.Compilers, compiler) {
			continue
		}
		return k
	}
	return nil
}

// ForPlatform returns the entries of l that apply to images of platform p
// (those listing no platform, and those listing p).
func (l *KnownList) ForPlatform(p string) *KnownList {
	if l == nil {
		return nil
	}
	out := &KnownList{Redis: l.Redis}
	for _, k := range l.Known {
		if len(k.Platforms) == 0 || slices.Contains(k.Platforms, p) {
			out.Known = append(out.Known, k)
		}
	}
	return out
}
