package pipeline

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/redis-variants/redis-variants/profiles"
	"github.com/redis-variants/redis-variants/publish"
)

// Profiles lists the trained profiles stored in each registry repository
// (build --profiles-to): one line each, with what it was trained for and
// on which CPU.
func Profiles(ctx context.Context, c Config, repos []string) error {
	tw := tabwriter.NewWriter(c.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tVARIANT\tPROFILE\tBYTES\tTRAINED ON\tCREATED\tKEY\tARTIFACT")
	for _, r := range repos {
		repo, err := publish.Repository(r)
		if err != nil {
			return err
		}
		list, err := profiles.List(ctx, repo, publish.ReadOptions(ctx)...)
		if err != nil {
			return err
		}
		for _, s := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.Key.Kind, s.Variant, s.File+" "+s.SHA256[:12], s.Bytes,
				s.CPU, s.Created, s.Key.Digest()[:12], s.Ref)
		}
	}
	return tw.Flush()
}
