package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The control protocol of a generator that stays up ("loadgen --serve"):
// JSON lines. The generator opens its session (Open) and writes one
// Reply: Ready, or Error. Then each line it reads is a Request, answered
// by one Reply line: the Results of its Windows, or Error. End of input
// closes the session and ends the generator. Requests are served one at a
// time, in order.

// Request is one line to a serving generator.
type Request struct {
	Windows *Windows `json:"windows,omitempty"`
}

// Reply is one line from a serving generator.
type Reply struct {
	Ready   bool     `json:"ready,omitempty"`
	Clients int      `json:"clients,omitempty"` // with Ready: connections open
	Results []Result `json:"results,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Serve opens a session with cfg and runs the requests read from in,
// writing each reply to out, until in ends or ctx is done.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	s, err := Open(ctx, cfg)
	if err != nil {
		enc.Encode(Reply{Error: err.Error()})
		return err
	}
	defer s.Close()
	if err := enc.Encode(Reply{Ready: true, Clients: s.Clients()}); err != nil {
		return fmt.Errorf("loadgen: writing to the controller: %w", err)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var req Request
		var rep Reply
		switch err := json.Unmarshal(sc.Bytes(), &req); {
		case err != nil:
			rep.Error = fmt.Sprintf("loadgen: reading a request: %v", err)
		case req.Windows == nil:
			rep.Error = "loadgen: a request names no windows"
		default:
			rep.Results, err = s.Run(ctx, *req.Windows)
			if err != nil {
				rep.Error = err.Error()
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("loadgen: writing to the controller: %w", err)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("loadgen: reading requests: %w", err)
	}
	return nil
}
