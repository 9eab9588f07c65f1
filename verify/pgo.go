package verify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis-variants/redis-variants/variants"
)

// PGOReportPath is where a PGO build's image keeps the optimised build's
// count of what found no profile (the recipe's pgo.txt).
const PGOReportPath = "/usr/local/share/redis-variants/pgo.txt"

// The most a PGO build may leave without profile data before verify calls
// the profile unused: source files with no profile at all (gcc), and the
// share of functions with no data (clang). The training runs every binary,
// so every instrumented object has a profile: a missing one means the
// build looked in the wrong place or the training's profile was lost.
const (
	MaxFilesWithoutProfile        = 0
	MaxFunctionsWithoutProfileShr = 0.02
)

// PGOReport is the recipe's count of the optimised build's profile
// warnings.
type PGOReport struct {
	ProfileSHA256           string
	FilesWithoutProfile     int // gcc: "profile count data file not found"
	Functions               int // clang: functions in the sources that reported
	FunctionsWithoutProfile int // clang: "of N functions, M have no data" (-Wprofile-instr-missing; no such line: every function had data)
	Mismatched              int // sources whose profile is out of date (coverage mismatch)
}

// ParsePGOReport reads pgo.txt ("key value" lines).
func ParsePGOReport(b []byte) PGOReport {
	var r PGOReport
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		n, _ := strconv.Atoi(strings.TrimSpace(v))
		switch k {
		case "profile_sha256":
			r.ProfileSHA256 = strings.TrimSpace(v)
		case "files_without_profile":
			r.FilesWithoutProfile = n
		case "functions":
			r.Functions = n
		case "functions_without_profile":
			r.FunctionsWithoutProfile = n
		case "mismatched":
			r.Mismatched = n
		}
	}
	return r
}

// PGOChecks prove a PGO build used its profile: Redis's own objects record
// the profile-using flag, the compiler found a profile for every source
// (within the thresholds) and none out of date, and the image's label
// names the profile the build used.
func PGOChecks(b *BinaryInfo, rep PGOReport, labels map[string]string, v variants.Variant) []Check {
	flag := "-fprofile-use="
	if v.Compiler.Family == variants.FamilyClang {
		flag = "-fprofile-instr-use="
	}
	own, with := 0, 0
	for _, l := range b.CommandLines {
		if !isRedisOwn(l) {
			continue
		}
		own++
		if strings.Contains(l, flag) {
			with++
		}
	}
	flags := Check{Name: "pgo flags", OK: own > 0 && with == own,
		Detail: fmt.Sprintf("%d of Redis's %d recorded command lines use %s", with, own, strings.TrimSuffix(flag, "="))}
	used := Check{Name: "pgo profile used"}
	share := 0.0
	if rep.Functions > 0 {
		share = float64(rep.FunctionsWithoutProfile) / float64(rep.Functions)
	}
	used.Detail = fmt.Sprintf("profile %s; sources without a profile: %d (at most %d); functions without data: %d of %d (at most %.0f%%); out of date: %d",
		short(rep.ProfileSHA256), rep.FilesWithoutProfile, MaxFilesWithoutProfile, rep.FunctionsWithoutProfile, rep.Functions, 100*MaxFunctionsWithoutProfileShr, rep.Mismatched)
	used.OK = rep.ProfileSHA256 != "" && rep.FilesWithoutProfile <= MaxFilesWithoutProfile &&
		share <= MaxFunctionsWithoutProfileShr && rep.Mismatched == 0
	label := Check{Name: "pgo label", OK: rep.ProfileSHA256 != "" && labels[labelPrefix+"pgo.profile"] == rep.ProfileSHA256,
		Detail: fmt.Sprintf("label %s=%s; the build used %s", labelPrefix+"pgo.profile", short(labels[labelPrefix+"pgo.profile"]), short(rep.ProfileSHA256))}
	out := []Check{flags, used, label}
	for i := range out {
		if !out[i].OK {
			out[i].Detail = "MISMATCH: " + out[i].Detail
		}
	}
	return out
}

// pgoTwinCheck compares the PGO build's redis-server with its twin's (the
// same spec without PGO), when the run built one.
func pgoTwinCheck(ctx context.Context, e Engine, bin []byte, t Target) Check {
	c := Check{Name: "pgo differs"}
	if t.Twin == "" {
		c.NotApplicable = true
		c.Detail = "no build of the same spec without PGO in this run to compare with"
		return c
	}
	server := t.TwinServer
	if server == "" {
		server = t.Server
	}
	other, err := e.CopyFileFromImage(ctx, t.Twin, server)
	if err != nil {
		c.Detail = fmt.Sprintf("reading %s from %s: %v", server, t.Twin, err)
		return c
	}
	a, b := sha256.Sum256(bin), sha256.Sum256(other)
	c.OK = a != b
	c.Detail = fmt.Sprintf("redis-server %s (%d bytes); without PGO (%s) %s (%d bytes)",
		hex.EncodeToString(a[:6]), len(bin), t.Twin, hex.EncodeToString(b[:6]), len(other))
	if !c.OK {
		c.Detail = "MISMATCH: the same binary as the build without PGO: " + c.Detail
	}
	return c
}
