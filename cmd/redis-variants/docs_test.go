package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFiles are the README and every file of docs/, relative to this
// package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, files...)
}

var (
	codeSpan = regexp.MustCompile("`(redis-variants [^`]*)`")
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// docCommands are the redis-variants command lines of a Markdown text:
// each line of a code block (fenced, or indented four spaces) that runs
// redis-variants, and each inline code span that starts with it; a line
// is cut at a comment, a pipe or a redirection, a span at its first
// placeholder bracket ([, (, |, …), where a synopsis starts.
func docCommands(text string) [][]string {
	var out [][]string
	add := func(s string, cut string) {
		if i := strings.IndexAny(s, cut); i >= 0 {
			s = s[:i]
		}
		f := strings.Fields(s)
		for i, w := range f {
			if filepath.Base(w) != "redis-variants" {
				continue
			}
			var args []string
			for _, a := range f[i+1:] {
				if a == "&&" || a == ";" {
					break
				}
				args = append(args, strings.Trim(a, `"'`))
			}
			if len(args) > 0 {
				out = append(out, args)
			}
			return
		}
	}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") {
			add(trim, "#|><")
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			add(m[1], "[(|…<#")
		}
	}
	return out
}

// TestDocCommands: every redis-variants command line in the README and
// docs/ names a command the tool has, with flags it accepts (parsed as
// the tool would, not run), and every relative link between them leads
// to a file that is there.
func TestDocCommands(t *testing.T) {
	n := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		for _, args := range docCommands(string(data)) {
			n++
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "--version") { // the root's own flags
				continue
			}
			checkArgs(t, name, args)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s: link to %s: %v", name, m[1], err)
			}
		}
	}
	if n < 20 {
		t.Errorf("%d command lines found in the README and docs/, want the quick start's and more", n)
	}
}

// TestDocCommandsFindsAMistake: the extraction sees a misspelt flag and
// an unknown command in each form the docs use.
func TestDocCommandsFindsAMistake(t *testing.T) {
	text := "```sh\nredis-variants run --onyl x   # comment\n```\n\n    redis-variants plna -f x.yaml\n\nInline `redis-variants publish --too R [--top K]`.\n"
	got := docCommands(text)
	want := [][]string{{"run", "--onyl", "x"}, {"plna", "-f", "x.yaml"}, {"publish", "--too", "R"}}
	if len(got) != len(want) {
		t.Fatalf("extracted %q, want %q", got, want)
	}
	for i := range want {
		if strings.Join(got[i], " ") != strings.Join(want[i], " ") {
			t.Fatalf("extracted %q, want %q", got, want)
		}
	}
	for _, args := range got {
		root := newRoot()
		cmd, rest, err := root.Find(args)
		if err == nil && cmd != root {
			err = cmd.ParseFlags(rest)
		}
		if err == nil && cmd != root {
			t.Errorf("`redis-variants %s` parsed without an error", strings.Join(args, " "))
		}
	}
}
