package machine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// LockFile is the machine lock's path under the state folder. Building,
// verifying and benchmarking each hold it for their whole stage, so a
// figure never comes from a machine that is also compiling.
func LockFile(state string) string { return filepath.Join(state, "locks", "machine.lock") }

// lockPoll is how often a waiting Lock retries.
const lockPoll = 250 * time.Millisecond

// Lock takes the exclusive machine lock at path, waiting until it is free
// or ctx ends, and says once on w (when not nil) who holds it. holder names
// the stage taking it ("build", "verify", "bench"); the lock file records
// it with the process ID and the time, for the next waiter to read. The
// returned function releases the lock.
func Lock(ctx context.Context, path, holder string, w io.Writer) (unlock func(), err error) {
	return lock(ctx, path, holder, func() error {
		if w != nil {
			fmt.Fprintf(w, "waiting for the machine lock %s (held by %s; builds, verification and benchmarks never overlap)\n", path, Holder(path))
		}
		return nil
	})
}

// ErrHeld is what TryLock returns (wrapped, naming the holder) when
// another process holds the lock.
var ErrHeld = errors.New("held by another process")

// TryLock takes the exclusive lock at path as Lock does, but does not
// wait: when another holds it, the error wraps ErrHeld and names the
// holder as its lock file records it.
func TryLock(path, holder string) (unlock func(), err error) {
	return lock(context.Background(), path, holder, func() error {
		return fmt.Errorf("%s is %w: %s", path, ErrHeld, Holder(path))
	})
}

// lock takes the lock at path; busy is called once when another holds
// it, and an error from it is returned instead of waiting.
func lock(ctx context.Context, path, holder string, busy func() error) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !said {
			said = true
			if err := busy(); err != nil {
				f.Close()
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s (held by %s): %w", path, Holder(path), ctx.Err())
		case <-time.After(lockPoll):
		}
	}
	record := fmt.Sprintf("%s pid %d since %s", holder, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(record), 0)
	}
	return func() {
		f.Truncate(0)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Holder is what the lock file at path says of its holder ("unknown" when
// it says nothing).
func Holder(path string) string {
	b, _ := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return "unknown"
}
