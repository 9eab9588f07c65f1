// Package scripts holds the set-up scripts; its tests check their refusals.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
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
