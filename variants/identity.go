package variants

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// spec is the part of a Variant that decides what gets built. Its
// canonical JSON (fixed field order, no name, no position) is hashed into
// the Variant's ID. Flags keep their order: order can matter to a compiler.
type spec struct {
	Kind         string   `json:"kind"`
	Redis        string   `json:"redis"`
	SourceSHA256 string   `json:"source_sha256"`
	Base         string   `json:"base"`
	Compiler     Compiler `json:"compiler"`
	ToolchainSHA string   `json:"toolchain_sha256"`
	Opt          string   `json:"opt"`
	March        string   `json:"march"`
	Mtune        string   `json:"mtune"`
	LTO          string   `json:"lto"`
	CFlags       []string `json:"cflags"`
	LDFlags      []string `json:"ldflags"`
	Allocator    string   `json:"allocator"`
	TLS          bool     `json:"tls"`
	Image        string   `json:"image"`
	Libc         string   `json:"libc,omitempty"`        // "" for glibc: IDs from before musl are unchanged
	Recipe       string   `json:"recipe,omitempty"`      // "" for the Debian official recipe, likewise
	PGO          *PGO     `json:"pgo,omitempty"`         // nil without PGO, likewise
	BOLT         *BOLT    `json:"bolt,omitempty"`        // nil without BOLT, likewise
	LayoutSeed   string   `json:"layout_seed,omitempty"` // "" for draw 1: a spec's own build keeps its ID
	Platform     string   `json:"platform,omitempty"`    // "" for linux/amd64: IDs from before platforms are unchanged
	Mcpu         string   `json:"mcpu,omitempty"`
}

// Spec returns the canonical JSON of the build-relevant fields of v.
func Spec(v Variant) []byte {
	s := spec{
		Kind: v.Kind, Redis: v.Redis, SourceSHA256: v.Source.SHA256, Base: v.Base,
		Compiler: v.Compiler, ToolchainSHA: v.Toolchain.SHA256, Opt: v.Opt,
		March: v.March, Mtune: v.Mtune, LTO: v.LTO,
		CFlags: nonNil(v.CFlags), LDFlags: nonNil(v.LDFlags),
		Allocator: v.Allocator, TLS: v.TLS, Image: v.Image, PGO: v.PGO, BOLT: v.BOLT,
		LayoutSeed: v.LayoutSeed, Mcpu: v.Mcpu,
	}
	if v.Platform != PlatformAMD64 {
		s.Platform = v.Platform
	}
	if v.Libc != LibcGlibc {
		s.Libc = v.Libc
	}
	if v.Recipe != RecipeOfficial {
		s.Recipe = v.Recipe
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // plain strings and bools cannot fail to marshal
	}
	return b
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ID returns the 12-hex-digit identity of v's normalized spec. Two
// spellings of the same build give the same ID; the name does not count.
func ID(v Variant) string {
	sum := sha256.Sum256(Spec(v))
	return hex.EncodeToString(sum[:])[:12]
}

// MaxLayouts is the most layout draws a build spec may ask for.
const MaxLayouts = 16

// DrawName is the name of draw k (2 and up) of the spec named spec.
func DrawName(spec string, k int) string { return fmt.Sprintf("%s.l%d", spec, k) }

// Draws returns vs with each tuned variant that asks for Layouts > 1
// followed by its draws 2..Layouts: copies of it that differ only in
// their name, Layout, DrawOf and LayoutSeed (the spec's ID and the draw:
// each spec's draws get link orders of their own) and so in their ID.
// The spec itself becomes draw 1. IDs must be set already.
func Draws(vs []Variant) []Variant {
	var out []Variant
	for _, v := range vs {
		if v.Kind != KindVariant || v.Layouts < 2 || v.Layout > 1 {
			out = append(out, v)
			continue
		}
		v.Layout = 1
		out = append(out, v)
		for k := 2; k <= v.Layouts; k++ {
			d := v
			d.Name, d.Layout, d.DrawOf = DrawName(v.Name, k), k, v.Name
			d.LayoutSeed = fmt.Sprintf("%s/%d", v.ID, k)
			d.ID = ID(d)
			out = append(out, d)
		}
	}
	return out
}

// SpecName names the build spec v is a draw of: DrawOf for draws 2 and up,
// else v's own name.
func (v Variant) SpecName() string {
	if v.DrawOf != "" {
		return v.DrawOf
	}
	return v.Name
}

// Select returns the references and variants named, in the order given,
// each once. A name may be a glob pattern (path.Match syntax, e.g.
// "gcc-*"). No names selects everything (references first). An unknown
// name is an error that lists the known ones.
func (p *Plan) Select(names []string) ([]Variant, error) {
	all := p.All()
	if len(names) == 0 {
		return all, nil
	}
	var out []Variant
	seen := map[string]bool{}
	var unknown []string
	for _, name := range names {
		found := false
		for _, v := range all {
			ok := v.Name == name
			if !ok && strings.ContainsAny(name, "*?[") {
				ok, _ = path.Match(name, v.Name)
			}
			if !ok {
				continue
			}
			found = true
			if !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, v)
			}
		}
		if !found {
			unknown = append(unknown, name)
		}
	}
	// A spec selected brings its layout draws.
	for _, v := range all {
		if v.DrawOf != "" && seen[v.DrawOf] && !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, v)
		}
	}
	if len(unknown) > 0 {
		known := make([]string, len(all))
		for i, v := range all {
			known[i] = v.Name
		}
		var hints []string
		for _, u := range unknown {
			hints = append(hints, fmt.Sprintf("%q%s", u, suggest(u, known)))
		}
		return nil, fmt.Errorf("selecting variants: unknown %s%s", strings.Join(hints, ", "), accepted(known))
	}
	return out, nil
}
