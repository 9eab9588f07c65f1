package machine

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLockWaitsAndNamesHolder(t *testing.T) {
	path := LockFile(t.TempDir())
	unlock, err := Lock(context.Background(), path, "build", nil)
	if err != nil {
		t.Fatal(err)
	}
	if h := Holder(path); !strings.HasPrefix(h, "build pid ") {
		t.Fatalf("holder recorded as %q", h)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*lockPoll)
	defer cancel()
	var log bytes.Buffer
	_, err = Lock(ctx, path, "bench", &log)
	if err == nil {
		t.Fatal("took a held lock")
	}
	// The waiter names the real holder, in its message and its error.
	if !strings.Contains(log.String(), "waiting for the machine lock") || !strings.Contains(log.String(), "held by build pid ") {
		t.Fatalf("waiting message: %q", log.String())
	}
	if !strings.Contains(err.Error(), "held by build pid ") {
		t.Fatalf("error: %v", err)
	}
	unlock()
	if h := Holder(path); h != "unknown" {
		t.Fatalf("released lock still names %q", h)
	}
	start := time.Now()
	unlock2, err := Lock(context.Background(), path, "bench", nil)
	if err != nil || time.Since(start) > 10*time.Second {
		t.Fatal(err)
	}
	if h := Holder(path); !strings.HasPrefix(h, "bench pid ") {
		t.Fatalf("holder recorded as %q", h)
	}
	unlock2()
	if filepath.Base(path) != "machine.lock" {
		t.Fatal(path)
	}
}

func TestTryLockRefusesNamingHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", ".lock")
	unlock, err := TryLock(path, "run")
	if err != nil {
		t.Fatal(err)
	}
	_, err = TryLock(path, "bench")
	if !errors.Is(err, ErrHeld) || !strings.Contains(err.Error(), "run pid ") || !strings.Contains(err.Error(), path) {
		t.Fatalf("a second TryLock: %v, want ErrHeld naming the path and the holder", err)
	}
	unlock()
	unlock2, err := TryLock(path, "bench")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	unlock2()
}
