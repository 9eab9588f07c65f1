package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-variants/redis-variants/engine"
	"github.com/redis-variants/redis-variants/variants"
)

// Engine is what the checks need from Docker Engine (engine.Client).
type Engine interface {
	ImageLabels(ctx context.Context, ref string) (map[string]string, error)
	StartServer(ctx context.Context, s engine.ServerSpec) (*engine.Server, error)
	WaitReady(ctx context.Context, s *engine.Server, timeout time.Duration) error
	Exec(ctx context.Context, containerID string, cmd []string, user string) (stdout, stderr string, exitCode int, err error)
	Logs(ctx context.Context, containerID string) (string, error)
	Remove(ctx context.Context, containerID string) error
	CopyFileFromImage(ctx context.Context, image, path string) ([]byte, error)
}

// Label keys the checks compare with the spec.
const labelPrefix = "io.redis-variants."

// ServerBinary is where the image keeps redis-server.
func ServerBinary(v variants.Variant) string {
	if v.Kind == variants.KindDistro {
		return "/usr/bin/redis-server"
	}
	return "/usr/local/bin/redis-server"
}

// ImageChecks starts image (host network) and checks it against v: PING,
// SET/GET, the Redis version, the allocator that runs, the compiler and
// flags recorded in the binary, the user, the labels. Every check is run;
// a check that cannot be done is a failed check saying why, and one with
// nothing to compare with (the spec is silent, the image records nothing
// to judge) is not applicable. What the image turned out to be (its Redis
// version, allocator, libc) is returned beside the checks, so that a
// pulled image of unknown build is described, not demanded.
func ImageChecks(ctx context.Context, e Engine, v variants.Variant, t Target) ([]Check, *Discovered) {
	var checks []Check
	found := &Discovered{}
	add := func(name string, ok bool, format string, a ...any) {
		checks = append(checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, a...)})
	}
	na := func(name string, format string, a ...any) {
		checks = append(checks, Check{Name: name, NotApplicable: true, Detail: fmt.Sprintf(format, a...)})
	}
	image := t.Image
	server := t.Server
	if server == "" {
		server = ServerBinary(v)
	}

	labels, err := e.ImageLabels(ctx, image)
	switch {
	case err != nil:
		add("labels", false, "reading the image's labels: %v", err)
	case t.Pulled != nil:
		// A pulled image is someone else's: its identity is its digest.
		what := "not built by redis-variants"
		if labels[labelPrefix+"kind"] != "" {
			what = fmt.Sprintf("its labels say redis-variants built it (%s %s, recipe %s)", labels[labelPrefix+"kind"], labels[labelPrefix+"name"], short(labels[labelPrefix+"recipe"]))
		}
		// The pull already refused anything but this digest: its identity
		// is recorded, and there is nothing to compare it with.
		na("pulled", "identified by its digest %s@%s for %s; %s", t.Pulled.Resolved, t.Pulled.Digest, t.Pulled.Platform, what)
	default:
		checks = append(checks, LabelChecks(labels, v)...)
	}

	bin, binErr := e.CopyFileFromImage(ctx, image, server)
	var info *BinaryInfo
	if binErr == nil {
		info, binErr = ReadBinary(bin)
	}
	switch {
	case binErr != nil:
		add("binary", false, "reading %s from the image: %v", server, binErr)
	case v.Kind == variants.KindVariant:
		checks = append(checks, ArchCheck(info, v))
		checks = append(checks, CompilerCheck(info, v.Compiler))
		checks = append(checks, FlagChecks(info, v)...)
		checks = append(checks, LibcCheck(info, v.Libc))
		if v.PGO != nil {
			report, err := e.CopyFileFromImage(ctx, image, PGOReportPath)
			if err != nil {
				add("pgo profile used", false, "reading %s from the image: %v", PGOReportPath, err)
			} else {
				checks = append(checks, PGOChecks(info, ParsePGOReport(report), labels, v)...)
			}
			checks = append(checks, pgoTwinCheck(ctx, e, bin, t))
		}
		if v.BOLT != nil {
			report, err := e.CopyFileFromImage(ctx, image, BOLTReportPath)
			if err != nil {
				add("bolt record", false, "reading %s from the image: %v", BOLTReportPath, err)
			} else {
				checks = append(checks, BOLTChecks(bin, info, ParseBOLTReport(report), labels)...)
			}
		}
		if v.Layout > 1 {
			checks = append(checks, layoutCheck(ctx, e, v, bin, t))
		} else {
			checks = append(checks, SuiteBinaryCheck(bin, t.SuiteServer))
		}
	case v.Kind == variants.KindOfficial && t.Pulled == nil:
		na("binary compiler", "reference (%s recipe): no compiler in its spec to compare with; records %s", v.Recipe, recordedCompiler(info))
		checks = append(checks, LibcCheck(info, v.Libc))
	default:
		// references are not built with recorded switches: say what they record.
		na("binary compiler", "%s: no compiler in its spec to compare with; records %s; runs on %s", kindText(v, t), recordedCompiler(info), info.Libc())
	}
	if info != nil {
		found.Libc = info.Libc()
	}

	srv, err := e.StartServer(ctx, engine.ServerSpec{Image: image, Network: "host", Labels: map[string]string{labelPrefix + "verify": v.Name}})
	if err != nil {
		add("start", false, "starting the image: %v", err)
		return checks, found
	}
	defer e.Remove(context.WithoutCancel(ctx), srv.ID)
	if err := e.WaitReady(ctx, srv, 30*time.Second); err != nil {
		logs, _ := e.Logs(ctx, srv.ID)
		add("start", false, "the server did not answer PING: %v; logs: %s", err, tailLines(logs, 10))
		return checks, found
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	defer rdb.Close()

	if pong, err := rdb.Ping(ctx).Result(); err != nil || pong != "PONG" {
		add("ping", false, "PING: %q, %v", pong, err)
	} else {
		add("ping", true, "PONG")
	}
	val := "verify-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := rdb.Set(ctx, "redis-variants:verify", val, 0).Err(); err != nil {
		add("set/get", false, "SET: %v", err)
	} else if got, err := rdb.Get(ctx, "redis-variants:verify").Result(); err != nil || got != val {
		add("set/get", false, "GET returned %q (%v), want %q", got, err, val)
	} else {
		add("set/get", true, "round trip of %d bytes", len(val))
	}

	infoServer, err := infoFields(ctx, rdb, "server")
	if err != nil {
		add("redis version", false, "INFO server: %v", err)
		return checks, found
	}
	ver := infoServer["redis_version"]
	found.Redis = ver
	switch {
	case v.Redis == "":
		na("redis version", "neither the spec nor the image names a version to compare with; the server reports %s", ver)
	default:
		add("redis version", ver == v.Redis, "spec %s; server reports redis_version %s", v.Redis, ver)
	}
	pid := infoServer["process_id"]

	infoMem, err := infoFields(ctx, rdb, "memory")
	if err != nil {
		add("allocator", false, "INFO memory: %v", err)
	} else {
		maps, _, code, err := e.Exec(ctx, srv.ID, []string{"cat", "/proc/" + pid + "/maps"}, "")
		if err != nil || code != 0 {
			maps = ""
		}
		c := AllocatorCheck(v.Allocator, infoMem["mem_allocator"], maps, info)
		checks = append(checks, c)
		found.Allocator, found.Evidence = DiscoverAllocator(infoMem["mem_allocator"], maps, info)
	}

	status, _, code, err := e.Exec(ctx, srv.ID, []string{"cat", "/proc/" + pid + "/status"}, "")
	if err != nil || code != 0 {
		add("user", false, "reading /proc/%s/status in the container: exit %d, %v", pid, code, err)
	} else {
		checks = append(checks, UserCheck(status, t.Pulled != nil))
	}
	return checks, found
}

// recordedCompiler is what the binary's .comment says of its compiler.
func recordedCompiler(b *BinaryInfo) string {
	if len(b.Comments) == 0 {
		return "no compiler identity (no .comment section)"
	}
	return strings.Join(b.Comments, " | ")
}

func infoFields(ctx context.Context, rdb *redis.Client, section string) (map[string]string, error) {
	s, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			out[k] = v
		}
	}
	return out, nil
}

// AllocatorCheck compares the allocator the spec asks for with what the
// running server reports (INFO mem_allocator), what is mapped into its
// process (/proc/PID/maps; mimalloc interposes malloc and Redis reports
// "libc") and, when given, what the binary links.
func AllocatorCheck(want, memAllocator, procMaps string, bin *BinaryInfo) Check {
	c := Check{Name: "allocator"}
	mapped := func(lib string) bool { return strings.Contains(procMaps, lib) }
	linked, evidence := allocatorEvidence(memAllocator, procMaps, bin)
	switch want {
	case "":
		// a pulled image: the spec has no allocator to hold it to
		found, _ := DiscoverAllocator(memAllocator, procMaps, bin)
		c.NotApplicable = true
		c.Detail = fmt.Sprintf("the spec names no allocator; the image runs %s (%s)", orUntold(found), evidence)
		return c
	case variants.AllocJemalloc:
		c.OK = strings.HasPrefix(memAllocator, "jemalloc-") && !mapped("libjemalloc") && linked != variants.AllocJemallocSystem
	case variants.AllocJemallocSystem:
		c.OK = strings.HasPrefix(memAllocator, "jemalloc-") && (mapped("libjemalloc") || linked == variants.AllocJemallocSystem)
	case variants.AllocTcmalloc:
		c.OK = strings.HasPrefix(memAllocator, "tcmalloc")
	case variants.AllocLibc:
		c.OK = memAllocator == "libc" && !mapped("libmimalloc") && !mapped("libjemalloc") && !mapped("libtcmalloc")
	case variants.AllocMimalloc:
		// Redis cannot tell mimalloc from libc: the proof is the library in the process.
		c.OK = memAllocator == "libc" && (mapped("libmimalloc") || linked == variants.AllocMimalloc)
		if c.OK && !mapped("libmimalloc") {
			evidence += " (linked, but not seen mapped)"
		}
	default:
		c.Detail = fmt.Sprintf("unknown allocator %q in the spec; %s", want, evidence)
		return c
	}
	c.Detail = fmt.Sprintf("spec %s; %s", want, evidence)
	if !c.OK {
		c.Detail = "MISMATCH: " + c.Detail
	}
	return c
}

// allocatorEvidence is what the allocator is told from: the server's
// mem_allocator, the allocator libraries mapped into its process, and what
// the binary links (linked, "" when it cannot be told).
func allocatorEvidence(memAllocator, procMaps string, bin *BinaryInfo) (linked, evidence string) {
	if bin != nil {
		linked = AllocatorFromBinary(bin)
	}
	evidence = fmt.Sprintf("mem_allocator=%s", memAllocator)
	if procMaps != "" {
		var libs []string
		for _, l := range []string{"libmimalloc", "libjemalloc", "libtcmalloc"} {
			if strings.Contains(procMaps, l) {
				libs = append(libs, l)
			}
		}
		evidence += fmt.Sprintf(", allocator libraries mapped: %s", orNone(libs))
	} else {
		evidence += ", process maps not readable"
	}
	if linked != "" {
		evidence += ", binary links " + linked
	}
	return linked, evidence
}

// DiscoverAllocator tells which allocator a running server uses, in the
// spec's words (variants.Alloc*), from the same evidence AllocatorCheck
// holds a spec to; "" when the evidence does not say.
func DiscoverAllocator(memAllocator, procMaps string, bin *BinaryInfo) (alloc, evidence string) {
	linked, evidence := allocatorEvidence(memAllocator, procMaps, bin)
	mapped := func(lib string) bool { return strings.Contains(procMaps, lib) }
	switch {
	case strings.HasPrefix(memAllocator, "jemalloc-") && (mapped("libjemalloc") || linked == variants.AllocJemallocSystem):
		alloc = variants.AllocJemallocSystem
	case strings.HasPrefix(memAllocator, "jemalloc-"):
		alloc = variants.AllocJemalloc
	case strings.HasPrefix(memAllocator, "tcmalloc"):
		alloc = variants.AllocTcmalloc
	case memAllocator == "libc" && (mapped("libmimalloc") || linked == variants.AllocMimalloc):
		alloc = variants.AllocMimalloc
	case memAllocator == "libc" && procMaps != "" && !mapped("libjemalloc") && !mapped("libtcmalloc"):
		alloc = variants.AllocLibc
	}
	return alloc, evidence
}

func orUntold(alloc string) string {
	if alloc == "" {
		return "an allocator the evidence does not tell"
	}
	return alloc
}

// UserCheck reads a /proc/PID/status and checks the server runs as the
// unprivileged redis user (uid 999), not root. For an image someone else
// made (pulled), whose redis user may have any uid, it checks only that
// the server does not run as root.
func UserCheck(status string, pulled bool) Check {
	c := Check{Name: "user"}
	for _, l := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			uids := f[:min(2, len(f))]
			if pulled {
				c.OK = !slices.Contains(uids, "0")
				c.Detail = fmt.Sprintf("server process uid (real, effective) %s, want any but 0 (root)", strings.Join(uids, ", "))
			} else {
				c.OK = !slices.ContainsFunc(uids, func(u string) bool { return u != "999" })
				c.Detail = fmt.Sprintf("server process uid (real, effective) %s, want 999 (redis)", strings.Join(uids, ", "))
			}
			if !c.OK {
				c.Detail = "MISMATCH: " + c.Detail
			}
			return c
		}
	}
	c.Detail = "no Uid line in the process status"
	return c
}

// LabelChecks compares the image's labels with the spec.
func LabelChecks(labels map[string]string, v variants.Variant) []Check {
	want := map[string]string{"id": v.ID, "name": v.Name}
	if v.Kind == variants.KindVariant {
		want["allocator"] = v.Allocator
		want["compiler"] = v.Compiler.String()
		want["opt"] = v.Opt
		want["lto"] = orOff(v.LTO)
		want["march"] = v.March
		want["mtune"] = v.Mtune
		if _, cross := variants.CrossFor(v.PlatformOf()); cross {
			want["platform"] = v.PlatformOf()
			want["mcpu"] = v.Mcpu
		}
	}
	var bad, good []string
	for _, k := range []string{"id", "name", "allocator", "compiler", "opt", "march", "mtune", "mcpu", "platform", "lto"} {
		w, ok := want[k]
		if !ok {
			continue
		}
		got, present := labels[labelPrefix+k]
		switch {
		case !present && w == "":
			good = append(good, k+"=(unset)")
		case !present:
			bad = append(bad, fmt.Sprintf("%s missing (spec %q)", labelPrefix+k, w))
		case got != w:
			bad = append(bad, fmt.Sprintf("%s=%q but spec %q", labelPrefix+k, got, w))
		default:
			good = append(good, k+"="+got)
		}
	}
	c := Check{Name: "labels", OK: len(bad) == 0}
	if c.OK {
		c.Detail = "agree with the spec: " + strings.Join(good, " ")
	} else {
		c.Detail = "MISMATCH: " + strings.Join(bad, "; ")
	}
	return []Check{c}
}

func kindText(v variants.Variant, t Target) string {
	if t.Pulled != nil {
		return "pulled image"
	}
	return "reference (" + v.Kind + ")"
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

func tailLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, " | ")
}

// SuiteBinaryCheck proves that the suite in the build ran the image's own
// redis-server (server: the sha256 its report recorded): a binary
// rewritten after the build (BOLT) must be the one the suite passed.
func SuiteBinaryCheck(bin []byte, server string) Check {
	const name = "suite binary"
	if server == "" {
		return Check{Name: name, NotApplicable: true, Detail: "the suite in the build did not run, or its report does not record the binary it ran"}
	}
	sum := sha256.Sum256(bin)
	got := hex.EncodeToString(sum[:])
	if got != server {
		return Check{Name: name, Detail: fmt.Sprintf("the image's redis-server is %s, the suite in the build ran %s: the suite did not test this binary", short(got), short(server))}
	}
	return Check{Name: name, OK: true, Detail: fmt.Sprintf("the suite in the build ran the image's redis-server (sha256 %s)", short(got))}
}
