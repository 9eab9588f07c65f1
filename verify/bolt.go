package verify

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// BOLTReportPath is where a BOLT build's image keeps the recipe's record
// of the rewrite (bolt.txt).
const BOLTReportPath = "/usr/local/share/redis-variants/bolt.txt"

// BOLTReport is the recipe's record of a BOLT rewrite.
type BOLTReport struct {
	Version          string // LLVM version of the llvm-bolt that rewrote it
	Options          string // llvm-bolt's options
	InputSHA256      string // the binary BOLT read (linked again with --emit-relocs)
	OutputSHA256     string // the binary BOLT wrote: the image's redis-server
	ProfileSHA256    string // the merged training profile (.fdata)
	RelinkedTextSame string // "yes" when the relinked .text is make's own, byte for byte
	Functions        int    // function symbols of the input
	FunctionsMoved   int    // of those, how many BOLT gave another address
}

// ParseBOLTReport reads bolt.txt ("key value" lines).
func ParseBOLTReport(b []byte) BOLTReport {
	var r BOLTReport
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		v = strings.TrimSpace(v)
		n, _ := strconv.Atoi(v)
		switch k {
		case "version":
			r.Version = v
		case "options":
			r.Options = v
		case "input_sha256":
			r.InputSHA256 = v
		case "output_sha256":
			r.OutputSHA256 = v
		case "profile_sha256":
			r.ProfileSHA256 = v
		case "relinked_text_same":
			r.RelinkedTextSame = v
		case "functions":
			r.Functions = n
		case "functions_moved":
			r.FunctionsMoved = n
		}
	}
	return r
}

// BOLTChecks prove a BOLT build is what it says: the binary carries BOLT's
// marker section (read here from the ELF, not from the recipe), it is the
// very binary the recipe's record describes (its sha256), that record
// says BOLT changed it (another sha256 than its input, functions moved,
// a profile), and the image's label names BOLT. The suite, run on this
// binary like on any other, is the check that BOLT did not miscompile it.
func BOLTChecks(bin []byte, info *BinaryInfo, rep BOLTReport, labels map[string]string) []Check {
	sum := sha256.Sum256(bin)
	got := hex.EncodeToString(sum[:])
	marker := Check{Name: "bolt marker", OK: strings.Contains(info.BOLTNote, "BOLT"),
		Detail: fmt.Sprintf(".note.bolt_info: %q", truncate(info.BOLTNote, 120))}
	if info.BOLTNote == "" {
		marker.Detail = "no .note.bolt_info section: BOLT did not write this binary"
	}
	same := Check{Name: "bolt record", OK: rep.OutputSHA256 != "" && got == rep.OutputSHA256,
		Detail: fmt.Sprintf("the image's redis-server is %s; bolt.txt describes %s (BOLT %s)", short(got), short(rep.OutputSHA256), rep.Version)}
	layout := Check{Name: "bolt layout",
		OK: rep.InputSHA256 != "" && rep.InputSHA256 != rep.OutputSHA256 && rep.FunctionsMoved > 0 && rep.ProfileSHA256 != "",
		Detail: fmt.Sprintf("%d of %d functions moved; input %s, output %s; profile %s; relinked code the same as make's: %s; options %s",
			rep.FunctionsMoved, rep.Functions, short(rep.InputSHA256), short(rep.OutputSHA256), short(rep.ProfileSHA256), cmp.Or(rep.RelinkedTextSame, "not recorded"), rep.Options)}
	label := Check{Name: "bolt label", OK: labels[labelPrefix+"bolt"] != "",
		Detail: fmt.Sprintf("label %s=%q", labelPrefix+"bolt", labels[labelPrefix+"bolt"])}
	out := []Check{marker, same, layout, label}
	for i := range out {
		if !out[i].OK {
			out[i].Detail = "MISMATCH: " + out[i].Detail
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
