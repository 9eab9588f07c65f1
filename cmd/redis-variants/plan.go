package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/redis-variants/redis-variants/pipeline"
	"github.com/redis-variants/redis-variants/variants"
)

// planOptions are the flags of `redis-variants plan`. Add new output modes
// here and dispatch on them in runPlan.
type planOptions struct {
	JSON       bool   // print the whole Plan as JSON instead of a table
	Dockerfile string // print the recipe (Dockerfile, target, build args) of this variant instead
}

// newCmdPlan builds `redis-variants plan`: load and validate the variants
// file, print the expanded references and variants.
func newCmdPlan(g *globals) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Validate the variants file and show the expanded references and variants",
		Long: `Validate the variants file and show what would be built: every reference
and variant (matrices expanded), with its ID, compiler, flags, allocator,
base image and source. Warnings go to stderr; any validation error is
printed (file:line:column: field: message) and the command fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(config(cmd, g), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print the plan as JSON")
	f.StringVar(&o.Dockerfile, "dockerfile", "", "print the Dockerfile, target and build args the builder sends for variant `NAME`")
	return cmd
}

func runPlan(c pipeline.Config, o *planOptions) error {
	out := c.Out
	plan, err := c.Plan()
	if err != nil {
		return err
	}
	if o.Dockerfile != "" {
		return pipeline.PrintRecipe(out, c, plan, o.Dockerfile)
	}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(plan)
	}
	return writePlanTable(out, plan)
}

// writePlanTable prints one row per reference and variant.
func writePlanTable(out io.Writer, plan *variants.Plan) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tID\tCOMPILER\tOPT\tMARCH\tMTUNE\tLTO\tPGO\tFLAGS\tALLOCATOR\tLIBC\tTLS\tBASE\tSOURCE")
	for _, v := range plan.All() {
		comp := "-"
		if v.Compiler.Family != "" {
			comp = v.Compiler.String()
		}
		src := dash(v.Source.Name)
		if v.Kind == variants.KindOfficial && v.Image != "" {
			src += " (image " + v.Image + ")"
		}
		if v.Kind == variants.KindDistro {
			src = "apt redis-server " + v.Redis
		}
		libc := dash(v.Libc)
		if v.Kind == variants.KindImage {
			src, libc = "pull "+v.Image, "-"
		}
		var flags []string
		flags = append(flags, v.CFlags...)
		for _, f := range v.LDFlags {
			flags = append(flags, "ld:"+f)
		}
		tls := "no"
		if v.TLS {
			tls = "yes"
		}
		pgo := "-"
		switch {
		case v.PGO != nil && v.BOLT != nil:
			pgo = "on+bolt"
		case v.PGO != nil:
			pgo = "on"
		case v.BOLT != nil:
			pgo = "bolt"
		}
		march, base := dash(v.March), dash(v.Base)
		if v.Mcpu != "" {
			march = strings.TrimPrefix(strings.TrimPrefix(march, "-")+" mcpu="+v.Mcpu, " ")
		}
		if v.Platform != "" {
			base += " " + v.Platform
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			v.Name, v.Kind, v.ID, comp, dash(v.Opt), march, dash(v.Mtune), dash(v.LTO), pgo,
			dash(strings.Join(flags, " ")), dash(v.Allocator), libc, tls, base, src)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var rts []string
	for _, r := range plan.Runtimes {
		rts = append(rts, r.Name)
	}
	specs := 0
	for _, v := range plan.Variants {
		if v.DrawOf == "" {
			specs++
		}
	}
	variantsLine := fmt.Sprintf("%d variants", specs)
	if specs != len(plan.Variants) {
		variantsLine = fmt.Sprintf("%d variants (%d images with their layout draws)", specs, len(plan.Variants))
	}
	if plan.Shard != nil {
		variantsLine += " in shard " + plan.Shard.String()
	}
	fmt.Fprintf(out, "\n%d references, %s; runtimes: %s; profiles: %s\n",
		len(plan.References), variantsLine, strings.Join(rts, ", "), strings.Join(profileNames(plan), ", "))
	return nil
}

func profileNames(plan *variants.Plan) []string {
	var names []string
	for _, n := range []string{"quick", "full"} {
		if _, ok := plan.Profiles[n]; ok {
			names = append(names, n)
		}
	}
	var rest []string
	for n := range plan.Profiles {
		if n != "quick" && n != "full" {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
