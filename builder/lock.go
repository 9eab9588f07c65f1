package builder

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockMachine takes the exclusive machine lock at path (conventionally
// .state/locks/machine.lock): building and benchmarking never overlap. It
// waits, saying so on w once, until the lock is free or ctx ends. The
// returned function releases the lock.
func LockMachine(ctx context.Context, path string, w io.Writer) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("machine lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("machine lock: %w", err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("machine lock %s: %w", path, err)
		}
		if !said && w != nil {
			owner, _ := os.ReadFile(path)
			fmt.Fprintf(w, "waiting for the machine lock %s (held by: %s)\n", path, string(owner))
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the machine lock: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	f.Truncate(0)
	fmt.Fprintf(f, "build pid %d since %s", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	return func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
