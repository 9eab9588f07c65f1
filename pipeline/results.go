package pipeline

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/redis-variants/redis-variants/artifact"
	"github.com/redis-variants/redis-variants/publish"
)

// ResultsPullOptions are the flags of `redis-variants results pull`.
type ResultsPullOptions struct {
	Into     string // run folder to write ("" = <runs>/<the artifact's run ID>)
	Insecure bool
}

// PullResults brings the results artifact ref names (the artifact itself,
// or an image it is attached to: the newest attachment) back as a run
// folder, and prints the folder's path.
func PullResults(ctx context.Context, c Config, ref string, o ResultsPullOptions) error {
	r, err := publish.Reference(ref, o.Insecure)
	if err != nil {
		return err
	}
	a, err := artifact.Resolve(ctx, r, publish.ReadOptions(ctx)...)
	if err != nil {
		return err
	}
	if ok, err := a.SubjectExists(ctx, publish.ReadOptions(ctx)...); err == nil && !ok {
		fmt.Fprintf(c.Err, "warning: %s (run %s) is attached to %s, which is no longer in %s: its images cannot be benchmarked again\n", a.Ref, a.Run(), a.Manifest.Subject.Digest, a.Ref.Context())
	}
	dir := o.Into
	if dir == "" {
		dir = filepath.Join(c.Runs, a.Run())
	}
	run, err := a.Pull(ctx, dir, publish.ReadOptions(ctx)...)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Err, "pulled %s (run %s, %s)\n", a.Ref, a.Run(), a.Manifest.Annotations[artifact.AnnotationCPU])
	fmt.Fprintln(c.Out, run.Dir)
	return nil
}
