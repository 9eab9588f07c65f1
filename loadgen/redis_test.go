package loadgen

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// server is a redis-server started by a test.
type server struct {
	Addr   string
	Socket string
	cmd    *exec.Cmd
}

// startRedis starts redis-server on a free port and a unix socket in a
// temporary folder, waits until it answers and stops it when the test ends.
func startRedis(t testing.TB, args ...string) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs redis-server")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found on PATH (install Debian's redis-server package): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--unixsocket", sock, "--enable-debug-command", "yes", "--logfile", filepath.Join(dir, "redis.log")}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	s := &server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Socket: sock, cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", s.Addr)
		if err == nil {
			c.Close()
			if _, err := os.Stat(sock); err == nil {
				return s
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server on %s did not come up within 10s: %v\n%s", s.Addr, err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) client(t testing.TB, password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: password, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func runOne(t *testing.T, cfg Config) Result {
	t.Helper()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run(%v): %v", cfg.Tests, err)
	}
	if len(res) != 1 {
		t.Fatalf("Run(%v) returned %d results, want 1", cfg.Tests, len(res))
	}
	return res[0]
}
