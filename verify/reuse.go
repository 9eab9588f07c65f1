package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// ChecksVersion is the version of what a verification proves: bump it
// whenever the checks, the suite's arguments or the judge change, so that
// no proof made by the old ones is reused.
const ChecksVersion = 4 // 2: three outcomes, discovered facts of pulled images, a suite required of every image; 3: the suite binary check, BOLT checks; 4: platform (emulation), binary architecture, -mcpu

// Proof is what a passed verification proved, and of what; results.Proof
// is the record.
type Proof = results.Proof

// ProofInputs is everything a verification's verdict depends on: the
// image by its ID (and its PGO twin's), the spec, the recipe, the suite
// (profile, units, the known-failure lists, the sources its tests come
// from), this machine's CPU flags (the ISA gate) and ChecksVersion.
type ProofInputs = results.ProofInputs

// Inputs returns what a verification of v as t under o would prove. ok is
// false when the image has no ID to key it by.
func Inputs(v variants.Variant, t Target, o Options) (in ProofInputs, ok bool) {
	if t.ID == "" || (t.Twin != "" && t.TwinID == "") || (t.First != "" && t.FirstID == "") {
		return in, false
	}
	in = ProofInputs{
		Image: t.ID, Twin: t.TwinID, First: t.FirstID, Spec: v.ID, Recipe: t.Recipe,
		Profile: o.Profile, Units: o.Units, ExternalUnits: o.ExternalUnits, NoExternal: o.NoExternal,
		Known: knownDigest(), CPUFlags: o.CPUFlags, Checks: ChecksVersion,
	}
	if in.CPUFlags == nil {
		host, err := machine.Read()
		if err != nil {
			return in, false
		}
		in.CPUFlags = host.Flags
	}
	if in.Profile == "" {
		in.Profile = ProfileQuick
	}
	if len(o.Sources) > 0 {
		in.Sources = map[string]string{}
		for name, s := range o.Sources {
			in.Sources[name] = s.SHA256
		}
	}
	in.CPUFlags = slices.Clone(in.CPUFlags)
	sort.Strings(in.CPUFlags)
	return in, true
}

// Key is the digest that names a proof's inputs.
func Key(in ProofInputs) string {
	b, _ := json.Marshal(in) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// knownDigest is the digest of the embedded known-failure lists,
// computed once: they cannot change while the program runs.
var knownDigest = sync.OnceValue(func() string {
	h := sha256.New()
	names, _ := fs.Glob(knownFS, "known/*.yaml")
	sort.Strings(names)
	for _, n := range names {
		b, _ := knownFS.ReadFile(n)
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
})

// Reuse wraps next with proofs kept in dir (.state/cache/verify): a
// verification whose inputs (Inputs) are those of a passed one is not run
// again; its report is that one's, under the entry's name and image
// reference, saying which run proved it (ReusedFrom). Anything else goes
// to next, and a report of next that passed is kept as a proof. Only
// passes are kept: a failure is verified again, as it may be the
// machine's. run is the run folder the reports go to (its name is what a
// proof made now records).
func Reuse(dir string, run *results.Run, o Options, next Interface) Interface {
	return &reuser{dir: dir, run: run, o: o, next: next}
}

type reuser struct {
	dir  string
	run  *results.Run
	o    Options
	next Interface
}

var _ Interface = (*reuser)(nil)

func (ru *reuser) Verify(ctx context.Context, v variants.Variant, t Target) Report {
	in, ok := Inputs(v, t, ru.o)
	if !ok {
		return ru.next.Verify(ctx, v, t)
	}
	key := Key(in)
	path := filepath.Join(ru.dir, key+".json")
	if p, err := readProof(path); err == nil && p.Key == key && p.Report.Status == StatusPassed {
		r := p.Report
		r.Variant, r.Image, r.ImageID, r.ReusedFrom, r.ProofKey = v.Name, t.Image, t.ID, p.Run, key // the key holds t.ID
		return r
	} else if err != nil && !errors.Is(err, os.ErrNotExist) && ru.o.Log != nil {
		fmt.Fprintf(ru.o.Log, "verify %s: the kept proof %s is unreadable (%v): verifying again\n", v.Name, path, err)
	}
	r := ru.next.Verify(ctx, v, t)
	if r.Status != StatusPassed {
		return r
	}
	r.ProofKey = key
	p := Proof{Key: key, Inputs: in, Run: filepath.Base(ru.run.Dir), Report: r}
	b, err := json.MarshalIndent(p, "", "  ")
	if err == nil {
		err = results.WriteFile(path, append(b, '\n'))
	}
	if err != nil && ru.o.Log != nil {
		// The verification stands; only its reuse is lost.
		fmt.Fprintf(ru.o.Log, "verify %s: keeping the proof for reuse: %v\n", v.Name, err)
	}
	return r
}

func readProof(path string) (Proof, error) {
	var p Proof
	b, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("decoding %s: %w", path, err)
	}
	return p, nil
}
