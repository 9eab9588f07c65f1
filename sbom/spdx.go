// Package sbom writes and reads the software bills of materials of the
// images this tool builds: SPDX 2.3 documents made by scanning a root
// filesystem (Debian's and Alpine's package databases, every redis-server
// binary with the allocator it links, the Redis source tree with its
// bundled dependencies), produced inside BuildKit through its SBOM
// generator protocol (Generate, cmd/redis-variants-sbom) and attached to
// the pushed image as in-toto attestations beside BuildKit's own SLSA
// provenance (Read).
package sbom

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Document is the part of an SPDX 2.3 JSON document this tool writes and
// reads.
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo says who made a document and when.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is one SPDX package.
type Package struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	VersionInfo      string        `json:"versionInfo,omitempty"`
	Supplier         string        `json:"supplier,omitempty"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []Checksum    `json:"checksums,omitempty"`
	LicenseConcluded string        `json:"licenseConcluded"`
	LicenseDeclared  string        `json:"licenseDeclared"`
	CopyrightText    string        `json:"copyrightText"`
	SourceInfo       string        `json:"sourceInfo,omitempty"`
	Purpose          string        `json:"primaryPackagePurpose,omitempty"`
	ExternalRefs     []ExternalRef `json:"externalRefs,omitempty"`
	Annotations      []Annotation  `json:"annotations,omitempty"`
}

// Checksum is a package's digest.
type Checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

// ExternalRef is a package URL (purl) or the like.
type ExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

// Annotation is a remark on a package; this tool's facts are annotations
// whose comment is "redis-variants:KEY=VALUE".
type Annotation struct {
	Annotator string `json:"annotator"`
	Date      string `json:"annotationDate"`
	Type      string `json:"annotationType"`
	Comment   string `json:"comment"`
}

// Relationship links two elements (DESCRIBES, CONTAINS, STATIC_LINK,
// DYNAMIC_LINK, GENERATED_FROM).
type Relationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// Facts this tool records on packages as annotations.
const (
	FactAllocator = "allocator" // on a redis-server: the allocator it links (variants.Alloc*)
	FactLibc      = "libc"      // on a redis-server: glibc, musl or static
	FactPath      = "path"      // on a binary: where it is in the filesystem
	FactRole      = "role"      // on a package: server, allocator, source, bundled, toolchain
	annotPrefix   = "redis-variants:"
)

// Fact returns the value of this tool's annotation key on p ("" if none).
func (p Package) Fact(key string) string {
	for _, a := range p.Annotations {
		if v, ok := strings.CutPrefix(a.Comment, annotPrefix+key+"="); ok {
			return v
		}
	}
	return ""
}

// Lookup returns the package with SPDX ID id.
func (d *Document) Lookup(id string) (Package, bool) {
	for _, p := range d.Packages {
		if p.SPDXID == id {
			return p, true
		}
	}
	return Package{}, false
}

// Related returns the packages p is related to by relationship type typ.
func (d *Document) Related(p Package, typ string) []Package {
	var out []Package
	for _, r := range d.Relationships {
		if r.Element == p.SPDXID && r.Type == typ {
			if q, ok := d.Lookup(r.Related); ok {
				out = append(out, q)
			}
		}
	}
	return out
}

// Find returns the packages named name.
func (d *Document) Find(name string) []Package {
	var out []Package
	for _, p := range d.Packages {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// Servers returns the redis-server binaries the document lists.
func (d *Document) Servers() []Package {
	var out []Package
	for _, p := range d.Packages {
		if p.Fact(FactRole) == "server" {
			out = append(out, p)
		}
	}
	return out
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// builder accumulates a document's packages and relationships with unique
// SPDX IDs.
type builder struct {
	doc     Document
	created string
	ids     map[string]int
}

func newBuilder(name, namespace, created, tool string) *builder {
	return &builder{created: created, ids: map[string]int{}, doc: Document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name: name, DocumentNamespace: namespace,
		CreationInfo: CreationInfo{Created: created, Creators: []string{"Tool: " + tool}},
	}}
}

// add adds p with an ID made from kind and its name, and this tool's facts.
func (b *builder) add(kind string, p Package, facts map[string]string) string {
	base := "SPDXRef-" + kind + "-" + strings.Trim(idUnsafe.ReplaceAllString(p.Name, "-"), "-")
	id := base
	if n := b.ids[base]; n > 0 {
		id = fmt.Sprintf("%s-%d", base, n+1)
	}
	b.ids[base]++
	p.SPDXID = id
	for _, k := range []*string{&p.DownloadLocation, &p.LicenseConcluded, &p.LicenseDeclared, &p.CopyrightText} {
		if *k == "" {
			*k = "NOASSERTION"
		}
	}
	keys := make([]string, 0, len(facts))
	for k := range facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.Annotations = append(p.Annotations, Annotation{Annotator: "Tool: redis-variants-sbom", Date: b.created, Type: "OTHER", Comment: annotPrefix + k + "=" + facts[k]})
	}
	b.doc.Packages = append(b.doc.Packages, p)
	return id
}

// relate adds a relationship once (a binary needing libc.so.6 and
// libm.so.6 links one package, libc6).
func (b *builder) relate(from, typ, to string) {
	r := Relationship{Element: from, Type: typ, Related: to}
	if !slices.Contains(b.doc.Relationships, r) {
		b.doc.Relationships = append(b.doc.Relationships, r)
	}
}

// setFact sets this tool's annotation key on the package id, replacing
// the one there.
func (b *builder) setFact(id, key, value string) {
	for i := range b.doc.Packages {
		p := &b.doc.Packages[i]
		if p.SPDXID != id {
			continue
		}
		a := Annotation{Annotator: "Tool: redis-variants-sbom", Date: b.created, Type: "OTHER", Comment: annotPrefix + key + "=" + value}
		for j := range p.Annotations {
			if strings.HasPrefix(p.Annotations[j].Comment, annotPrefix+key+"=") {
				p.Annotations[j] = a
				return
			}
		}
		p.Annotations = append(p.Annotations, a)
	}
}
