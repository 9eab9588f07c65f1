package enginetest

import (
	"syscall"
	"testing"
)

// TinyDisk mounts a tmpfs of size (mount's syntax: "2m", "64k") at a new
// folder and returns it: a disk that fills, for real, in the middle of a
// write. It needs root, as the set-up and the daemons do.
func TinyDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mounting a %s tmpfs at %s (this test needs root, as set-up does): %v", size, dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}
