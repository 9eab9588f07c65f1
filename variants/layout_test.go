package variants

import (
	"strings"
	"testing"
)

func TestLayoutDraws(t *testing.T) {
	const file = `
defaults: {layouts: 3, redis: 7.0.15}
references:
  - {name: stock-debian, kind: distro-package}
variants:
  - {name: a, compiler: gcc-12, opt: O2}
  - {name: b, compiler: gcc-12, opt: O3, layouts: 1}
  - name: c
    image: redis:7.0.15
`
	p, err := Parse("test.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, " "); got != "a a.l2 a.l3 b c" {
		t.Fatalf("variants %q, want a and its draws, b, c", got)
	}
	a, a2, a3 := p.Variants[0], p.Variants[1], p.Variants[2]
	if a.Layout != 1 || a.Layouts != 3 || a.DrawOf != "" || a.LayoutSeed != "" || a.SpecName() != "a" {
		t.Errorf("draw 1: %+v", a)
	}
	if a2.Layout != 2 || a2.DrawOf != "a" || a2.SpecName() != "a" || a2.LayoutSeed != a.ID+"/2" || a3.LayoutSeed != a.ID+"/3" {
		t.Errorf("draws 2 and 3: %+v %+v", a2, a3)
	}
	if a.ID == a2.ID || a2.ID == a3.ID {
		t.Errorf("draws share an ID: %s %s %s", a.ID, a2.ID, a3.ID)
	}
	// draw 1 is the spec's own build: the same ID as without layouts
	one, err := Parse("one.yaml", []byte(strings.Replace(file, "layouts: 3", "layouts: 1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if one.Variants[0].ID != a.ID {
		t.Errorf("draw 1's ID %s, one build's %s: want the same", a.ID, one.Variants[0].ID)
	}
	if p.References[0].Layouts != 0 || p.Variants[3].Layouts != 0 || p.Variants[4].Layouts != 0 {
		t.Errorf("references and pulled images are one draw; layouts %d %d %d", p.References[0].Layouts, p.Variants[3].Layouts, p.Variants[4].Layouts)
	}
	sel, err := p.Select([]string{"a"})
	if err != nil || len(sel) != 3 {
		t.Errorf("selecting a: %d entries, %v; want a with its 2 draws", len(sel), err)
	}
}

func TestLayoutErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"variants:\n  - {name: a, layouts: 0}\n", "test.yaml:2:24: variants[0].layouts: layouts: 0 draws: from 1 (one build) to 16"},
		{"variants:\n  - {name: a, layouts: 17}\n", "layouts: 17 draws"},
		{"variants:\n  - {name: a, layouts: four}\n", "variants[0].layouts: expected a whole number"},
		{"variants:\n  - {name: a, image: redis:7.0.15, layouts: 2}\n", "layouts does not apply to an image entry"},
		{"references:\n  - {name: r, kind: distro-package, layouts: 2}\n", "references[0].layouts"},
		{"defaults: {redis: 7.0.15}\nvariants:\n  - {name: a, layouts: 2}\n  - {name: a.l2, opt: O3}\n", "duplicate name \"a.l2\""},
	} {
		_, err := Parse("test.yaml", []byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.file, err, c.want)
		}
	}
}
