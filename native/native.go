// Package native runs an image's own redis-server as a plain process on
// the host: no namespace, no cgroup and no seccomp filter of Docker's,
// the binary, its libraries and its allocator taken from the image's
// filesystem (chrooted into an export of it), pinned to the same CPUs a
// container would be, its CPU time read from /proc. Co-scheduled against
// the same image in a container, it tells what the container costs.
//
// What differs from the container besides the isolation, and is said
// wherever its figures are shown: the process runs as root (the images'
// entrypoints drop to the redis user). Its root gets /dev/null, /dev/zero,
// /dev/random and /dev/urandom, and the host's /proc mounted at /proc
// (Redis reads its RSS there), unmounted before the root is removed; a
// root left mounted by a runner that was killed is swept by the next
// (Sweep), once no process runs in it.
package native

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/machine"
)

// Images is what the runner needs of the Docker Engine: an image's
// filesystem and its environment (engine.Client).
type Images interface {
	ExportImage(ctx context.Context, image string) (io.ReadCloser, error)
	ImageRuntime(ctx context.Context, image string) (engine.ImageRuntime, error)
}

// IDPrefix starts the ID of every server the runner starts: what tells
// them from containers.
const IDPrefix = "native-"

// Runner starts and stops native servers. Its roots (one export per
// image, reused by every server of that image) live under Dir until
// Close.
type Runner struct {
	Images Images
	Dir    string // where the images' roots go (a temporary folder of the caller's)

	mu    sync.Mutex
	roots map[string]*root
	procs map[string]*proc
}

type root struct {
	once sync.Once
	dir  string
	rt   engine.ImageRuntime
	bin  string // redis-server's path inside the root
	err  error
}

type proc struct {
	cmd    *exec.Cmd
	cgroup string // its own cgroup's folder
	done   chan struct{}
	err    error // the process's exit, once done is closed
	log    *engine.LockedBuffer
}

// Is reports whether id is a native server's.
func Is(id string) bool { return strings.HasPrefix(id, IDPrefix) }

// Start starts image s.Image's redis-server on 127.0.0.1 at s.Port (a
// free one when 0), pinned to s.CPUs. What needs a cgroup (a CPU quota,
// a memory limit) or a container (a socket folder, a command other than
// the server, a seccomp setting) is refused.
func (r *Runner) Start(ctx context.Context, s engine.ServerSpec) (*engine.Server, error) {
	what := "starting " + s.Image + "'s redis-server natively"
	switch {
	case s.CPULimit > 0:
		return nil, fmt.Errorf("%s: a CPU quota needs a cgroup, and a native server has none of Docker's", what)
	case s.Memory > 0:
		return nil, fmt.Errorf("%s: a memory limit needs a cgroup, and a native server has none of Docker's", what)
	case s.SocketDir != "":
		return nil, fmt.Errorf("%s: a native server listens on TCP only", what)
	case len(s.Cmd) > 0:
		return nil, fmt.Errorf("%s: a native server runs redis-server, not %q", what, s.Cmd)
	case s.Seccomp != "" && s.Seccomp != "default":
		return nil, fmt.Errorf("%s: seccomp %q: a native server has no filter to change", what, s.Seccomp)
	}
	rt, err := r.root(ctx, s.Image)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	port := s.Port
	if port == 0 {
		if port, err = engine.FreePort(); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	args := engine.ServerArgs(port, true, "", s.Args)
	cmd := &exec.Cmd{Path: rt.bin, Args: append([]string{rt.bin}, args[1:]...), Env: rt.rt.Env, Dir: "/"}
	if rt.rt.WorkingDir != "" {
		cmd.Dir = rt.rt.WorkingDir
	}
	log := &engine.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rt.dir, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startPinned(cmd, s.CPUs); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: log}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	id := IDPrefix + strconv.Itoa(cmd.Process.Pid)
	if p.cgroup, err = enterCgroup(id, cmd.Process.Pid); err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	r.mu.Lock()
	if r.procs == nil {
		r.procs = map[string]*proc{}
	}
	r.procs[id] = p
	r.mu.Unlock()
	name := s.Name
	if name == "" {
		name = id
	}
	return &engine.Server{ID: id, Name: name, Addr: "127.0.0.1:" + strconv.Itoa(port)}, nil
}

// startPinned starts cmd with the CPU affinity of the list cpus ("" =
// any) from its first instruction: the child is cloned from a thread
// pinned for the purpose, and inherits its mask, as every thread Redis
// starts inherits it in turn.
func startPinned(cmd *exec.Cmd, cpus string) error {
	if cpus == "" {
		return cmd.Start()
	}
	list, err := machine.ParseCPUList(cpus)
	if err != nil {
		return err
	}
	var set unix.CPUSet
	for _, c := range list {
		set.Set(c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("reading this thread's CPU affinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pinning to CPUs %s: %w", cpus, err)
	}
	if err := cmd.Start(); err != nil {
		unix.SchedSetaffinity(0, &old)
		return err
	}
	// The thread goes back to Go's pool (it must live on: the child's
	// Pdeathsig is tied to it), so its mask must come back too.
	if err := unix.SchedSetaffinity(0, &old); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		runtime.LockOSThread() // never unlocked: Go ends the pinned thread with this goroutine's lock count
		return fmt.Errorf("restoring this thread's CPU affinity: %w", err)
	}
	return nil
}

// WaitReady waits until the server answers PING, its process exits, or
// timeout passes.
func (r *Runner) WaitReady(ctx context.Context, s *engine.Server, timeout time.Duration) error {
	p, err := r.proc(s.ID)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Protocol: 2, DisableIdentity: true, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1, PoolSize: 1})
	defer rdb.Close()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-p.done:
			return fmt.Errorf("waiting for native server %s: it exited (%v): %s", s.Name, p.err, tail(p.log.String()))
		case <-ctx.Done():
			return fmt.Errorf("waiting for native server %s: %w", s.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("native server %s did not answer PING within %s: %v: %s", s.Name, timeout, last, tail(p.log.String()))
		}
	}
}

// CPUUsageNanos is the server process's CPU time so far, every thread's
// (machine.ProcessCPUNanos).
func (r *Runner) CPUUsageNanos(_ context.Context, id string) (uint64, error) {
	if _, err := r.proc(id); err != nil {
		return 0, err
	}
	pid, _ := strconv.Atoi(strings.TrimPrefix(id, IDPrefix))
	v, err := machine.ProcessCPUNanos(pid)
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of native server %s: %w", id, err)
	}
	return v, nil
}

// Remove kills the server's process group and waits for it. A server
// that is gone already is not an error.
func (r *Runner) Remove(_ context.Context, id string) error {
	r.mu.Lock()
	p := r.procs[id]
	delete(r.procs, id)
	r.mu.Unlock()
	if p == nil {
		return nil
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("native server %s did not exit 10 s after SIGKILL", id)
	}
	return removeCgroup(p.cgroup)
}

// CgroupParent is the cgroup under which each native server gets its own,
// as Docker puts each container in its own under "docker" (cgroup v1,
// cgroupfs) or "system.slice" (v2, systemd): the two servers of a pair
// must meet the scheduler alike. A process left in the root cgroup beside
// a container's took 37% of their shared CPU here, the container 63%.
func CgroupParent() (string, error) {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return "/sys/fs/cgroup/redis-variants", nil
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.shares"); err == nil {
		return "/sys/fs/cgroup/cpu/redis-variants", nil
	}
	return "", errors.New("no cgroup hierarchy with the cpu controller at /sys/fs/cgroup (v2) or /sys/fs/cgroup/cpu (v1)")
}

// enterCgroup makes server id's own cgroup under CgroupParent and moves
// process pid (every thread) into it.
func enterCgroup(id string, pid int) (string, error) {
	parent, err := CgroupParent()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("making the native servers' cgroup: %w", err)
	}
	if strings.HasPrefix(parent, "/sys/fs/cgroup/redis-variants") {
		// v2: the cpu controller down to the leaves (the root has it
		// where Docker uses it); refusals show as the leaf's missing
		// cpu.weight below
		os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu"), 0)
		os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+cpu"), 0)
	}
	dir := filepath.Join(parent, id)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("making %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("moving the server into %s: %w", dir, err)
	}
	return dir, nil
}

// removeCgroup removes an emptied cgroup (the kernel may take a moment to
// see its last process gone).
func removeCgroup(dir string) error {
	if dir == "" {
		return nil
	}
	var err error
	for range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}

// Running reports whether server id's process is running.
func (r *Runner) Running(id string) bool {
	r.mu.Lock()
	p := r.procs[id]
	r.mu.Unlock()
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Started is how many servers the runner has started and not removed.
func (r *Runner) Started() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.procs)
}

// Close removes every server still running and every root.
func (r *Runner) Close() error {
	r.mu.Lock()
	var ids []string
	for id := range r.procs {
		ids = append(ids, id)
	}
	roots := r.roots
	r.roots = nil
	r.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, r.Remove(context.Background(), id))
	}
	for _, rt := range roots {
		if rt.dir != "" {
			errs = append(errs, removeRoot(rt.dir))
		}
	}
	return errors.Join(errs...)
}

// mountProc mounts a proc file system at root/proc.
func mountProc(root string) error {
	p := filepath.Join(root, "proc")
	if err := os.MkdirAll(p, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", p, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc in the image's root (native servers need root): %w", err)
	}
	return nil
}

// removeRoot unmounts root/proc and removes root; with /proc still
// mounted it removes nothing (RemoveAll would walk the host's /proc).
func removeRoot(root string) error {
	p := filepath.Join(root, "proc")
	if mounted(p) {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w (the root is left in place)", p, err)
		}
	}
	return os.RemoveAll(root)
}

// mounted reports whether p is a mount point, from /proc/self/mountinfo.
func mounted(p string) bool {
	for _, mp := range mountPoints() {
		if mp == p {
			return true
		}
	}
	return false
}

func mountPoints() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			out = append(out, unescapeMount(f[4]))
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Sweep removes the roots that runners killed before their Close left
// behind: each root matching the glob pattern (a root folder, like
// /tmp/redis-variants-bench-*/root-*) that has /proc mounted and in
// which no process runs. It returns how many it removed.
func Sweep(pattern string) (int, error) {
	inUse := map[string]bool{}
	if pids, err := filepath.Glob("/proc/[0-9]*/root"); err == nil {
		for _, p := range pids {
			if r, err := os.Readlink(p); err == nil && r != "/" {
				inUse[r] = true
			}
		}
	}
	n := 0
	var errs []error
	for _, mp := range mountPoints() {
		root := filepath.Dir(mp)
		if filepath.Base(mp) != "proc" {
			continue
		}
		if ok, _ := filepath.Match(pattern, root); !ok || inUse[root] {
			continue
		}
		if err := removeRoot(root); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func (r *Runner) proc(id string) (*proc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.procs[id]
	if p == nil {
		return nil, fmt.Errorf("no native server %s", id)
	}
	return p, nil
}

// root is image's exported filesystem, made once.
func (r *Runner) root(ctx context.Context, image string) (*root, error) {
	r.mu.Lock()
	if r.roots == nil {
		r.roots = map[string]*root{}
	}
	rt := r.roots[image]
	if rt == nil {
		rt = &root{}
		r.roots[image] = rt
	}
	r.mu.Unlock()
	rt.once.Do(func() { rt.err = r.makeRoot(ctx, image, rt) })
	return rt, rt.err
}

func (r *Runner) makeRoot(ctx context.Context, image string, rt *root) error {
	if r.Images == nil {
		return errors.New("no Docker Engine to export the image from")
	}
	var err error
	if rt.rt, err = r.Images.ImageRuntime(ctx, image); err != nil {
		return err
	}
	if rt.dir, err = os.MkdirTemp(r.Dir, "root-"); err != nil {
		return fmt.Errorf("making the image's root: %w", err)
	}
	tr, err := r.Images.ExportImage(ctx, image)
	if err != nil {
		return err
	}
	err = Untar(tr, rt.dir)
	tr.Close()
	if err != nil {
		return fmt.Errorf("unpacking image %s: %w", image, err)
	}
	if err := makeDevices(rt.dir); err != nil {
		return err
	}
	if err := mountProc(rt.dir); err != nil {
		return err
	}
	if rt.bin, err = findServer(rt.dir, rt.rt.Env); err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	return nil
}

// findServer is redis-server's path inside root, looked up along the
// image's PATH.
func findServer(root string, env []string) (string, error) {
	p := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			p = v
		}
	}
	for _, d := range strings.Split(p, ":") {
		if !path.IsAbs(d) {
			continue
		}
		c := path.Join(d, "redis-server")
		if _, err := os.Lstat(filepath.Join(root, c)); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("no redis-server along its PATH %s", p)
}

// makeDevices makes the device files Redis opens in root/dev.
func makeDevices(root string) error {
	dev := filepath.Join(root, "dev")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	for _, d := range []struct {
		name         string
		major, minor uint32
	}{{"null", 1, 3}, {"zero", 1, 5}, {"random", 1, 8}, {"urandom", 1, 9}} {
		p := filepath.Join(dev, d.name)
		os.Remove(p)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(d.major, d.minor))); err != nil {
			return fmt.Errorf("making /dev/%s in the image's root (native servers need root): %w", d.name, err)
		}
		os.Chmod(p, 0o666)
	}
	return nil
}

// Untar unpacks a filesystem's tar stream into dir: folders, files,
// symbolic and hard links (device files and the like are left out). No
// entry may write outside dir: names are cleaned and links are made as
// they are, never followed while unpacking.
func Untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		if name == "/" {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := safeParent(dir, dst); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
		mode := os.FileMode(h.Mode).Perm() | os.FileMode(h.Mode)&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			os.Chmod(dst, mode|0o700)
		case tar.TypeReg:
			os.Remove(dst)
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("%s: %w", h.Name, err)
			}
			if err := os.Chmod(dst, mode); err != nil {
				return err
			}
		case tar.TypeSymlink:
			os.Remove(dst)
			if err := os.Symlink(h.Linkname, dst); err != nil {
				return err
			}
		case tar.TypeLink:
			src := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Linkname)))
			if err := safeParent(dir, src); err != nil {
				return fmt.Errorf("%s: link to %s: %w", h.Name, h.Linkname, err)
			}
			os.Remove(dst)
			if err := os.Link(src, dst); err != nil {
				return err
			}
		}
	}
}

// safeParent refuses p when a folder on its way below dir is a symbolic
// link (writing through it could land outside dir).
func safeParent(dir, p string) error {
	rel, err := filepath.Rel(dir, filepath.Dir(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return errors.New("outside the root")
	}
	if rel == "." {
		return nil
	}
	cur := dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		if errors.Is(err, os.ErrNotExist) {
			return os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link", cur)
		}
	}
	return nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "..." + s[len(s)-600:]
	}
	return s
}
