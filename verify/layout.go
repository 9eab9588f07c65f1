package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/redis-variants/redis-variants/dockerfiles"
	"github.com/redis-variants/redis-variants/variants"
)

// LayoutFacts is what the layout check compares of two draws of a spec.
type LayoutFacts struct {
	Differ      bool // the redis-server files differ
	Objects     [2]string
	LinkOrders  [2]string
	Functions   int // global functions both define (named once in each)
	Moved       int // of those, at another address
	OnlyOne     int // functions one of the two defines and the other does not
	FirstDigest string
	DrawDigest  string
}

// layoutCheck proves draw v (Layout 2 and up) is its spec's code placed
// elsewhere: its redis-server differs from draw 1's (t.First), both
// images' build records give the same objects' hash and different link
// orders, both binaries define the same functions, and functions sit at
// other addresses. The suite ran on draw 1; this check is what makes it
// stand for the others.
func layoutCheck(ctx context.Context, e Engine, v variants.Variant, bin []byte, t Target) Check {
	c := Check{Name: "layout draw"}
	if t.First == "" {
		c.Detail = fmt.Sprintf("draw %d of %s: draw 1 (%s) has no successful build in this run, so nothing proves this draw is the same code (the suite runs on draw 1 only)", v.Layout, v.DrawOf, v.DrawOf)
		return c
	}
	server := t.FirstServer
	if server == "" {
		server = t.Server
	}
	if server == "" {
		server = ServerBinary(v)
	}
	first, err := e.CopyFileFromImage(ctx, t.First, server)
	if err != nil {
		c.Detail = fmt.Sprintf("reading %s from draw 1 (%s): %v", server, t.First, err)
		return c
	}
	infos := [2][]byte{}
	for i, img := range []string{t.First, t.Image} {
		if infos[i], err = e.CopyFileFromImage(ctx, img, dockerfiles.BuildInfoPath); err != nil {
			c.Detail = fmt.Sprintf("reading %s from %s: %v", dockerfiles.BuildInfoPath, img, err)
			return c
		}
	}
	f, err := CompareLayouts(first, bin, infos[0], infos[1])
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	c.Detail = fmt.Sprintf("draw %d of %s: redis-server %s, draw 1's %s; objects %s in both; link orders %s and %s; %d of %d functions moved, %d defined by one only",
		v.Layout, v.DrawOf, f.DrawDigest, f.FirstDigest, short(f.Objects[0]), short(f.LinkOrders[0]), short(f.LinkOrders[1]), f.Moved, f.Functions, f.OnlyOne)
	switch {
	case !f.Differ:
		c.Detail = "MISMATCH: the same file as draw 1: " + c.Detail
	case f.Objects[0] == "" || f.Objects[0] != f.Objects[1]:
		c.Detail = "MISMATCH: not the same objects as draw 1: " + c.Detail
	case f.LinkOrders[0] == f.LinkOrders[1]:
		c.Detail = "MISMATCH: the same link order as draw 1: " + c.Detail
	case f.OnlyOne > 0:
		c.Detail = "MISMATCH: not the same functions as draw 1: " + c.Detail
	case f.Moved == 0:
		c.Detail = "MISMATCH: no function moved: " + c.Detail
	default:
		c.OK = true
	}
	return c
}

// CompareLayouts compares two draws' redis-server files (a, b) and build
// records (build-info.json).
func CompareLayouts(a, b, infoA, infoB []byte) (LayoutFacts, error) {
	var f LayoutFacts
	da, db := sha256.Sum256(a), sha256.Sum256(b)
	f.FirstDigest, f.DrawDigest = hex.EncodeToString(da[:6]), hex.EncodeToString(db[:6])
	f.Differ = da != db
	for i, info := range [][]byte{infoA, infoB} {
		var rec struct {
			Objects   string `json:"objects_sha256"`
			LinkOrder string `json:"link_order_sha256"`
		}
		if err := json.Unmarshal(info, &rec); err != nil {
			return f, fmt.Errorf("reading a build record: %w", err)
		}
		f.Objects[i], f.LinkOrders[i] = rec.Objects, rec.LinkOrder
	}
	fa, err := functionAddrs(a)
	if err != nil {
		return f, fmt.Errorf("draw 1's redis-server: %w", err)
	}
	fb, err := functionAddrs(b)
	if err != nil {
		return f, fmt.Errorf("this draw's redis-server: %w", err)
	}
	for name, addr := range fa {
		other, ok := fb[name]
		if !ok {
			f.OnlyOne++
			continue
		}
		f.Functions++
		if other != addr {
			f.Moved++
		}
	}
	for name := range fb {
		if _, ok := fa[name]; !ok {
			f.OnlyOne++
		}
	}
	return f, nil
}

// functionAddrs maps each global function the ELF binary defines (a
// name it defines once, with code) to its address.
func functionAddrs(bin []byte) (map[string]uint64, error) {
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("reading ELF binary: %w", err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		return nil, fmt.Errorf("reading the symbol table: %w", err)
	}
	out := map[string]uint64{}
	seen := map[string]int{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || elf.ST_BIND(s.Info) != elf.STB_GLOBAL || s.Section == elf.SHN_UNDEF || s.Size == 0 {
			continue
		}
		seen[s.Name]++
		out[s.Name] = s.Value
	}
	for name, n := range seen {
		if n > 1 {
			delete(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no global functions in the symbol table (stripped?)")
	}
	return out, nil
}
