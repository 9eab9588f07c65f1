package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/variants"
)

// BinfmtDir is where the kernel lists the binfmt_misc entries that run
// foreign binaries.
var BinfmtDir = "/proc/sys/fs/binfmt_misc"

// Emulation says how this machine runs the binaries of v's platform: ""
// with ok for its own platform; for another, the binfmt_misc entry (qemu)
// that runs them, or why none can. The entry must be enabled and carry
// the F flag (the interpreter opened when it was registered), or the
// binaries would not run inside containers, which do not hold qemu.
func Emulation(v variants.Variant) (how string, ok bool) {
	c, cross := variants.CrossFor(v.PlatformOf())
	if !cross {
		return "", true
	}
	p := filepath.Join(BinfmtDir, c.Qemu)
	b, err := os.ReadFile(p)
	if err != nil {
		return fmt.Sprintf("a %s image on this %s machine needs user-mode emulation, and binfmt_misc has no %s entry (%v): scripts/setup.sh installs qemu-user-static and registers it", v.PlatformOf(), engine.HostPlatform(), c.Qemu, err), false
	}
	var interp, flags string
	enabled := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "enabled":
			enabled = true
		case strings.HasPrefix(l, "interpreter "):
			interp = strings.TrimPrefix(l, "interpreter ")
		case strings.HasPrefix(l, "flags: "):
			flags = strings.TrimPrefix(l, "flags: ")
		}
	}
	switch {
	case !enabled:
		return fmt.Sprintf("binfmt_misc's %s entry is disabled: %s images cannot run here", c.Qemu, v.PlatformOf()), false
	case !strings.Contains(flags, "F"):
		return fmt.Sprintf("binfmt_misc's %s entry lacks the F flag (flags %q): its interpreter %s is not in the containers that run %s binaries", c.Qemu, flags, interp, v.PlatformOf()), false
	}
	return fmt.Sprintf("%s under user-mode emulation: binfmt_misc %s, interpreter %s, flags %s", v.PlatformOf(), c.Qemu, interp, flags), true
}
