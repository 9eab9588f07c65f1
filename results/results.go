// Package results is the run folder that ties the stages together: one
// folder per run, every file written atomically (temporary file, fsync,
// rename), so an interrupted run loses nothing it had finished.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The run folder's files, one name each. Per-entry records are at
// BuildRel(name) and VerificationRel(name); trials under TrialsDir.
const (
	PlanFile        = "plan.json"        // the variants file's plan, as the run was built
	GateFile        = "gate.json"        // a gate run's decision (redis-variants gate)
	MachineFile     = "machine.json"     // machine.Info of the machine measured on
	BenchPlanFile   = "bench-plan.json"  // the drawn design: seed, profile, units in order
	BenchFile       = "bench.json"       // bench's summary
	CalibrationFile = "calibration.json" // the load the bench found saturates a pair, per benchmark (Calibration)
	RankingFile     = "ranking.json"     // rank.Ranking
	PublishedFile   = "published.json"   // what publish pushed
	LockFile        = ".lock"            // held by the one process writing the folder (never packed: a dot file)
	TrialsDir       = "trials"
	PairsDir        = "pairs"
	MemoryDir       = "memory" // one file per memory-workload server: MemoryRel
)

// Run is one run's results folder, e.g. runs/20261129-223300.
type Run struct {
	Dir string
}

// NewRunID returns a sortable run ID for now.
func NewRunID(t time.Time) string { return t.UTC().Format("20060102-150405") }

// Open creates (or reopens, to resume) the run folder dir.
func Open(dir string) (*Run, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run folder: %w", err)
	}
	return &Run{Dir: dir}, nil
}

// Latest returns the newest run folder under root, or "" when there is none.
func Latest(root string) (string, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return "", nil
		}
		return "", err
	}
	latest := ""
	for _, e := range ents {
		if e.IsDir() && e.Name() > latest && e.Name()[0] != '.' {
			latest = e.Name()
		}
	}
	if latest == "" {
		return "", nil
	}
	return filepath.Join(root, latest), nil
}

// Find returns the run folder a later stage works on: dir when given (it
// must exist: a later stage never starts a run), else the newest under
// root. first names the command that makes a run folder, for the error
// when there is none.
func Find(dir, root, first string) (*Run, error) {
	if dir == "" {
		latest, err := Latest(root)
		if err != nil {
			return nil, fmt.Errorf("finding the latest run under %s: %w", root, err)
		}
		if latest == "" {
			return nil, fmt.Errorf("no run folder under %s: run `redis-variants %s` first, or give --run", root, first)
		}
		dir = latest
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("run folder %s does not exist (give --run an existing run folder)", dir)
	}
	return &Run{Dir: dir}, nil
}

// Path joins elem under the run folder.
func (r *Run) Path(elem ...string) string {
	return filepath.Join(append([]string{r.Dir}, elem...)...)
}

// WriteJSON writes v as indented JSON to rel, atomically.
func (r *Run) WriteJSON(rel string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		if nan := nanPaths(v); len(nan) > 0 {
			return fmt.Errorf("encoding %s: %w (in %s)", rel, err, strings.Join(nan, ", "))
		}
		return fmt.Errorf("encoding %s: %w", rel, err)
	}
	return WriteFile(r.Path(rel), append(b, '\n'))
}

// ReadJSON reads rel into v.
func (r *Run) ReadJSON(rel string, v any) error {
	b, err := os.ReadFile(r.Path(rel))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %s: %w", r.Path(rel), err)
	}
	return nil
}

// Exists reports whether rel exists in the run folder.
func (r *Run) Exists(rel string) bool {
	_, err := os.Stat(r.Path(rel))
	return err == nil
}

// WriteFile writes data to path atomically: a temporary file in the same
// folder, fsynced, then renamed over path.
func WriteFile(path string, data []byte) error { return WriteFileMode(path, data, 0o644) }

// WriteFileMode is WriteFile with the file's permissions (0o600 for a
// private key: it is never readable by others, not even for a moment).
func WriteFileMode(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming into %s: %w", path, err)
	}
	ok = true
	return nil
}

// loadInOrder is LoadDir with the records sorted by seq, the order in which
// they were scheduled (path order among equals).
func loadInOrder[T any](r *Run, dir string, valid func(*T) error, seq func(*T) int) ([]T, []Skipped, error) {
	out, skipped, err := LoadDir(r, dir, valid)
	if err != nil {
		return nil, nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return seq(&out[i]) < seq(&out[j]) })
	return out, skipped, nil
}

// loadByName is LoadDir with the records keyed by the entry they are of.
func loadByName[T any](r *Run, dir string, valid func(*T) error, name func(*T) string) (map[string]T, []Skipped, error) {
	all, skipped, err := LoadDir(r, dir, valid)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]T, len(all))
	for i := range all {
		out[name(&all[i])] = all[i]
	}
	return out, skipped, nil
}

// Skipped is a record file left out by LoadDir: unreadable, not JSON, or
// rejected by the record's own check.
type Skipped struct {
	Path string
	Err  error
}

func (s Skipped) Error() string { return fmt.Sprintf("%s: %v", s.Path, s.Err) }

// LoadDir decodes every *.json file under the run folder's dir
// (recursively; names starting with "." are skipped) as a T, in path
// order; valid, when not nil, rejects a decoded record. There is one policy
// for a bad file: it is left out and listed in skipped, never fatal. rank
// then reports the rest and names it; a resumed bench does not count it as
// done and measures it again, and its atomic write replaces the bad file.
// Only a folder that cannot be walked is an error; a missing dir gives none.
func LoadDir[T any](r *Run, dir string, valid func(*T) error) (out []T, skipped []Skipped, err error) {
	root := r.Path(dir)
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == root {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			skipped = append(skipped, Skipped{Path: p, Err: err})
			return nil
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			skipped = append(skipped, Skipped{Path: p, Err: fmt.Errorf("decoding: %w", err)})
			return nil
		}
		if valid != nil {
			if err := valid(&v); err != nil {
				skipped = append(skipped, Skipped{Path: p, Err: err})
				return nil
			}
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", root, err)
	}
	return out, skipped, nil
}
