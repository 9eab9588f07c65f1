// Package scripts holds the set-up scripts; its tests check their refusals.
package scripts

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func setup(t *testing.T, state string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "setup.sh")
	cmd.Env = append(os.Environ(), append([]string{"RV_STATE=" + state, "RV_SKIP_APT=1"}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestSetupRefusesWhenDiskIsShort(t *testing.T) {
	out, err := setup(t, t.TempDir(), "RV_MIN_FREE_MB=999999999")
	if err == nil || !strings.Contains(out, "not enough free disk") || !strings.Contains(out, "need 999999999 MB") {
		t.Fatalf("err=%v out=%s", err, out)
	}
}

func TestSetupRefusesASecondConcurrentRun(t *testing.T) {
	state := t.TempDir()
	os.MkdirAll(filepath.Join(state, "locks"), 0o755)
	f, err := os.Create(filepath.Join(state, "locks", "setup.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(state, "locks", "setup.pid"), []byte("4242\n"), 0o644)
	out, err := setup(t, state)
	if err == nil || !strings.Contains(out, "another set-up is running (pid 4242)") {
		t.Fatalf("err=%v out=%s", err, out)
	}
}

func TestSlimRootfsRefusesANonRootfs(t *testing.T) {
	out, err := exec.Command("bash", "slim-rootfs.sh", t.TempDir(), "http://mirror", "bookworm").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not a root file system") {
		t.Fatalf("err=%v out=%s", err, out)
	}
}

// TestDaemonRecords: make clean-state (daemons.sh stop-all) stops a
// daemon set-up recorded, and neither one it did not record nor a record
// whose pid now belongs to another command; set-up's ours says which is
// which.
func TestDaemonRecords(t *testing.T) {
	state := t.TempDir()
	exited := map[*exec.Cmd]chan error{}
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		ch := make(chan error, 1)
		go func() { ch <- c.Wait() }() // reaped at once, as init reaps a daemon
		exited[c] = ch
		t.Cleanup(func() { c.Process.Kill() })
		return c
	}
	recorded, other, reused := start(), start(), start()
	os.MkdirAll(filepath.Join(state, "pids"), 0o755)
	write := func(name string, c *exec.Cmd) {
		os.WriteFile(filepath.Join(state, "pids", name+".pid"), []byte(strconv.Itoa(c.Process.Pid)+"\n"), 0o644)
	}
	write("sleep", recorded)
	write("dockerd", reused) // a stale record: that pid is a sleep now, not a dockerd
	ours := func(name string) bool {
		return exec.Command("bash", "-c", `source daemons.sh; STATE="$1"; ours "$2"`, "-", state, name).Run() == nil
	}
	if !ours("sleep") || ours("dockerd") || ours("buildkitd") {
		t.Fatalf("ours: sleep %v (recorded), dockerd %v (stale), buildkitd %v (none)", ours("sleep"), ours("dockerd"), ours("buildkitd"))
	}
	out, err := exec.Command("bash", "daemons.sh", "stop-all", state).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stopping sleep (pid "+strconv.Itoa(recorded.Process.Pid)+")") || strings.Contains(string(out), "dockerd") {
		t.Fatalf("stop-all: %v\n%s", err, out)
	}
	select {
	case <-exited[recorded]:
	default:
		t.Error("the recorded daemon was not stopped")
	}
	for _, c := range []*exec.Cmd{other, reused} {
		select {
		case err := <-exited[c]:
			t.Errorf("pid %d, not a daemon set-up recorded, was stopped: %v", c.Process.Pid, err)
		default:
		}
	}
	if left, _ := filepath.Glob(filepath.Join(state, "pids", "*")); len(left) != 0 {
		t.Errorf("records left after stop-all: %v", left)
	}
}

// TestSetupCheckChangesNothing: RV_SETUP_CHECK=1 (make setup-check) says
// what set-up would start (here a registry at an address nobody serves),
// exits 1 because it would change something, and writes nothing: not
// even its state folder.
func TestSetupCheckChangesNothing(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	out, err := setup(t, state, "RV_SETUP_CHECK=1", "RV_REGISTRY=127.0.0.1:9")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, "would start a Distribution registry at 127.0.0.1:9") {
		t.Fatalf("err=%v out=%s", err, out)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the check wrote its state folder %s: %v", state, err)
	}
}
