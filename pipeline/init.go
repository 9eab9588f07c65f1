package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/redis-variants/redis-variants/machine"
	"github.com/redis-variants/redis-variants/results"
	"github.com/redis-variants/redis-variants/variants"
)

// InitOptions are the flags of `redis-variants init`.
type InitOptions struct {
	Base  string // base image the variants build on (default variants.DefaultBase)
	Force bool   // overwrite an existing file
}

// Init writes a commented starter variants file for this machine (its
// CPU's x86-64 level, the compilers the base offers) to c.File, or to
// c.Out when c.File is "-". An existing file is kept unless o.Force.
func Init(c Config, o InitOptions) error {
	in, err := machine.Read()
	if err != nil {
		return fmt.Errorf("reading this machine's CPU: %w", err)
	}
	b, err := variants.Starter(variants.StarterMachine{CPUModel: in.CPUModel, Level: in.Level, Base: o.Base})
	if err != nil {
		return err
	}
	if c.File == "-" {
		_, err := c.Out.Write(b)
		return err
	}
	if _, err := os.Stat(c.File); err == nil && !o.Force {
		return fmt.Errorf("%s exists: keeping it (--force overwrites it, -f FILE writes another, -f - prints)", c.File)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := results.WriteFile(c.File, b); err != nil {
		return err
	}
	fmt.Fprintf(c.Err, "wrote %s for %s (x86-64-%s); check it with: redis-variants plan -f %s\n", c.File, in.CPUModel, in.Level, c.File)
	return nil
}
