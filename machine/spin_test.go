package machine

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSpin: the spinner threads are pinned, SCHED_IDLE, busy, and gone
// after stop. Busy is CPU 0 left without idle time while it spins: a
// SCHED_IDLE spinner yields to any other work there (a parallel go test
// took all but 23 ms of 200), so its own CPU time says nothing under load,
// but CPU 0's idle time is near zero whatever else runs on it.
func TestSpin(t *testing.T) {
	stop, err := Spin([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // the spinner is up before Spin returns; let it run
	cpuBefore, err := ReadCPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	cpuAfter, err := ReadCPUTimes()
	if err != nil {
		t.Fatal(err)
	}
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
	stop()
	if idle != 1 {
		t.Errorf("%d SCHED_IDLE threads, want the one spinner", idle)
	}
	d := cpuAfter[0].Sub(cpuBefore[0])
	if d.Total() == 0 || float64(d.Idle+d.IOWait) > 0.2*float64(d.Total()) {
		t.Errorf("CPU 0 idle %d of %d ticks while spinning, want under 20%%", d.Idle+d.IOWait, d.Total())
	}
	time.Sleep(50 * time.Millisecond)
	a, _ := ProcessCPUNanos(os.Getpid())
	time.Sleep(200 * time.Millisecond)
	b, _ := ProcessCPUNanos(os.Getpid())
	if b-a > 50e6 {
		t.Errorf("still spinning after stop: %d ns of CPU in 200 ms", b-a)
	}
}
