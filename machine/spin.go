package machine

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Spin keeps each CPU of cpus from going idle until stop is called: one
// thread a CPU, pinned there, busy in a loop under the SCHED_IDLE policy,
// so any other thread that wakes on that CPU takes it at once, and the
// (virtual) CPU never halts. On a VM a halted vCPU's wake-up costs a trip
// through the hypervisor: a server idle between requests answers each
// one that much later. It is what "spinning" buys a latency measurement
// on a machine whose kernel cannot busy-poll the path (loopback and
// Docker's veth pairs have no NAPI context for net.core.busy_poll).
// The spinners' CPU time is not any server's or generator's.
func Spin(cpus []int) (stop func(), err error) {
	var quit atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, len(cpus))
	for _, c := range cpus {
		wg.Add(1)
		go func() {
			// never unlocked: Go ends this thread, SCHED_IDLE and pinned,
			// with the goroutine
			runtime.LockOSThread()
			var set unix.CPUSet
			set.Set(c)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				errs <- fmt.Errorf("pinning a spinner to CPU %d: %w", c, err)
				wg.Done()
				return
			}
			attr := unix.SchedAttr{Size: uint32(unsafe.Sizeof(unix.SchedAttr{})), Policy: unix.SCHED_IDLE}
			if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
				errs <- fmt.Errorf("making the spinner on CPU %d SCHED_IDLE: %w", c, err)
				wg.Done()
				return
			}
			errs <- nil
			for !quit.Load() {
			}
			wg.Done()
		}()
	}
	var first error
	for range cpus {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	stop = func() { quit.Store(true); wg.Wait() }
	if first != nil {
		stop()
		return nil, first
	}
	return stop, nil
}
