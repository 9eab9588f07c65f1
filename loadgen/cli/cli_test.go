package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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

// With --exact-tests an LRANGE test runs alone (no separate LPUSH pass),
// so everything the server did during the run belongs to that test.
func TestExactTests(t *testing.T) {
	port := freePort(t)
	srv := exec.Command("redis-server", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1")
	if err := srv.Start(); err != nil {
		t.Fatalf("starting Debian's redis-server (apt-get install redis-server): %v", err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for i := 0; i < 50; i++ {
		if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			c.Close()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	count := func(args ...string) int {
		out, err := run(append([]string{"--port", strconv.Itoa(port), "--json", "-n", "200", "-c", "4"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var rep struct {
			Results []struct {
				Test     string `json:"test"`
				Requests int64  `json:"requests"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return len(rep.Results)
	}
	if n := count("-t", "LRANGE_100"); n != 2 {
		t.Errorf("-t LRANGE_100 ran %d tests, want 2 (redis-benchmark's LPUSH pass first)", n)
	}
	if n := count("--exact-tests", "-t", "LRANGE_100"); n != 1 {
		t.Errorf("--exact-tests -t LRANGE_100 ran %d tests, want 1", n)
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
