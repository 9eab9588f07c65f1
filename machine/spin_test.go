package machine

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSpin: the spinner threads are pinned, SCHED_IDLE, busy, and gone
// after stop.
func TestSpin(t *testing.T) {
	before, _ := ProcessCPUNanos(os.Getpid())
	stop, err := Spin([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	idle := 0
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, tk := range tasks {
		b, _ := os.ReadFile("/proc/self/task/" + tk.Name() + "/sched")
		if strings.Contains(string(b), "policy") {
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) == 3 && f[0] == "policy" && f[2] == "5" {
					idle++
				}
			}
		}
	}
	after, _ := ProcessCPUNanos(os.Getpid())
	stop()
	if idle != 1 {
		t.Errorf("%d SCHED_IDLE threads, want the one spinner", idle)
	}
	if after-before < 50e6 {
		t.Errorf("the process used %d ns of CPU in 200 ms of spinning, want most of it", after-before)
	}
	time.Sleep(50 * time.Millisecond)
	a, _ := ProcessCPUNanos(os.Getpid())
	time.Sleep(200 * time.Millisecond)
	b, _ := ProcessCPUNanos(os.Getpid())
	if b-a > 50e6 {
		t.Errorf("still spinning after stop: %d ns of CPU in 200 ms", b-a)
	}
}
