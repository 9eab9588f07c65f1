package variants

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Severities of a Diagnostic.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// String formats d as "file:line:column: [warning: ]field.path: message".
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Pos.File != "" {
		b.WriteString(d.Pos.File)
		if d.Pos.Line > 0 {
			fmt.Fprintf(&b, ":%d", d.Pos.Line)
			if d.Pos.Column > 0 {
				fmt.Fprintf(&b, ":%d", d.Pos.Column)
			}
		}
		b.WriteString(": ")
	}
	if d.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Error is returned by Load and Parse when a file has mistakes. It holds
// every error found (warnings are not included; they are in
// Plan.Warnings when the file is valid).
type Error struct {
	Diagnostics []Diagnostic
}

// Error prints one diagnostic per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// maxDiagnostics bounds the number of diagnostics one file can produce.
const maxDiagnostics = 200

// collector gathers diagnostics, dropping exact duplicates (a matrix
// repeats the same field node in many combinations).
type collector struct {
	file   string
	diags  []Diagnostic
	seen   map[string]bool
	errors int
	capped bool
}

func (c *collector) add(sev string, n *yaml.Node, field, msg string) {
	d := Diagnostic{Pos: Pos{File: c.file}, Field: field, Message: msg, Severity: sev}
	if n != nil {
		d.Pos.Line, d.Pos.Column = n.Line, n.Column
	}
	key := d.String()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[key] {
		return
	}
	if len(c.diags) >= maxDiagnostics {
		if !c.capped {
			c.capped = true
			c.diags = append(c.diags, Diagnostic{Pos: Pos{File: c.file}, Message: fmt.Sprintf("too many diagnostics; stopped after %d", maxDiagnostics), Severity: SeverityError})
			c.errors++
		}
		return
	}
	c.seen[key] = true
	c.diags = append(c.diags, d)
	if sev == SeverityError {
		c.errors++
	}
}

func (c *collector) errf(n *yaml.Node, field, format string, args ...any) {
	c.add(SeverityError, n, field, fmt.Sprintf(format, args...))
}

func (c *collector) warnf(n *yaml.Node, field, format string, args ...any) {
	c.add(SeverityWarning, n, field, fmt.Sprintf(format, args...))
}

// split returns errors and warnings, each sorted by position.
func (c *collector) split() (errs, warns []Diagnostic) {
	for _, d := range c.diags {
		if d.Severity == SeverityError {
			errs = append(errs, d)
		} else {
			warns = append(warns, d)
		}
	}
	less := func(s []Diagnostic) func(i, j int) bool {
		return func(i, j int) bool {
			a, b := s[i].Pos, s[j].Pos
			if (a.Line == 0) != (b.Line == 0) {
				return a.Line != 0 // positioned first, file-level last
			}
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		}
	}
	sort.SliceStable(errs, less(errs))
	sort.SliceStable(warns, less(warns))
	return errs, warns
}
