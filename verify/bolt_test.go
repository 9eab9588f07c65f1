package verify

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// withBOLTNote returns a copy of a real ELF binary (this machine's
// /bin/true) carrying a .note.bolt_info section as BOLT writes it: a note
// header, then BOLT's revision and options as text.
func withBOLTNote(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	note := filepath.Join(dir, "note")
	// namesz 5, descsz, type 3 ("BOLT\0"-named note), then the text
	text := "BOLT revision: llvm-19.1.7\n\nBOLT command line: llvm-bolt redis-server -o out -data=redis.fdata\n"
	hdr := []byte{5, 0, 0, 0, byte(len(text)), 0, 0, 0, 3, 0, 0, 0, 'B', 'O', 'L', 'T', 0, 0, 0, 0}
	if err := os.WriteFile(note, append(hdr, text...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "true")
	cmd := exec.Command("objcopy", "--add-section", ".note.bolt_info="+note, "/bin/true", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("objcopy (binutils, which the tests' gcc brings): %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BOLTChecks read BOLT's marker from the ELF itself and fail an image
// whose binary is not the one bolt.txt describes, that BOLT left as it
// was, or whose label does not name BOLT.
func TestBOLTChecks(t *testing.T) {
	bolted := withBOLTNote(t)
	plain, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	sha := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	in, out := strings.Repeat("1", 64), sha(bolted)
	report := func(input, output string, moved int) string {
		return "version 19.1.7\noptions -reorder-blocks=ext-tsp\ninput_sha256 " + input + "\noutput_sha256 " + output +
			"\nprofile_sha256 " + strings.Repeat("2", 64) + "\nrelinked_text_same yes\nfunctions 5000\nfunctions_moved " + strconv.Itoa(moved) + "\n"
	}
	labels := map[string]string{labelPrefix + "bolt": "llvm-bolt-19"}
	cases := []struct {
		name   string
		bin    []byte
		report string
		labels map[string]string
		failed []string
	}{
		{"bolted", bolted, report(in, out, 1200), labels, nil},
		{"no marker", plain, report(in, sha(plain), 1200), labels, []string{"bolt marker"}},
		{"another binary", bolted, report(in, strings.Repeat("3", 64), 1200), labels, []string{"bolt record"}},
		{"nothing moved", bolted, report(in, out, 0), labels, []string{"bolt layout"}},
		{"unchanged", bolted, report(out, out, 10), labels, []string{"bolt layout"}},
		{"no label", bolted, report(in, out, 1200), nil, []string{"bolt label"}},
		{"no report", bolted, "", labels, []string{"bolt record", "bolt layout"}},
	}
	for _, c := range cases {
		info, err := ReadBinary(c.bin)
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, ch := range BOLTChecks(c.bin, info, ParseBOLTReport([]byte(c.report)), c.labels) {
			if !ch.OK {
				failed = append(failed, ch.Name)
			}
			if c.name == "bolted" {
				t.Logf("%s: %s", ch.Name, ch.Detail)
			}
		}
		if strings.Join(failed, ",") != strings.Join(c.failed, ",") {
			t.Errorf("%s: failed %v, want %v", c.name, failed, c.failed)
		}
	}
	if info, _ := ReadBinary(bolted); !strings.HasPrefix(info.BOLTNote, "BOLT revision: llvm-19.1.7") {
		t.Errorf("the marker read from the ELF: %q", info.BOLTNote)
	}
}

// The suite binary check passes only when the suite ran the image's own
// redis-server, and is not applicable when nothing says what it ran.
func TestSuiteBinaryCheck(t *testing.T) {
	bin := []byte("\x7fELF the image's redis-server")
	sum := sha256.Sum256(bin)
	if c := SuiteBinaryCheck(bin, hex.EncodeToString(sum[:])); !c.OK || c.NotApplicable {
		t.Errorf("same binary: %+v", c)
	}
	other := sha256.Sum256([]byte("the binary before BOLT rewrote it"))
	if c := SuiteBinaryCheck(bin, hex.EncodeToString(other[:])); c.OK || c.NotApplicable || !strings.Contains(c.Detail, "did not test this binary") {
		t.Errorf("another binary: %+v", c)
	}
	if c := SuiteBinaryCheck(bin, ""); c.OK || !c.NotApplicable {
		t.Errorf("nothing recorded: %+v", c)
	}
}
