package cli

import (
	"bytes"
	"strings"
	"testing"
)

func run(args ...string) (string, error) {
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestListTests(t *testing.T) {
	out, err := run("--list-tests")
	if err != nil || !strings.Contains(out, "LRANGE_600\n") || !strings.Contains(out, "MIXED\n") {
		t.Errorf("--list-tests: %v\n%s", err, out)
	}
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--csv", "--json"}, "exclusive"},
		{[]string{"-t", "bogus"}, `unknown test "bogus"`},
		{[]string{"--port", "0"}, "--port 0"},
		{[]string{"--key-pattern", "pareto", "--port", "1"}, "pareto"},
	} {
		if _, err := run(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}
