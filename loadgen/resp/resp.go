// Package resp encodes Redis commands and scans Redis replies (RESP2, plus
// the RESP3 types a server may send) without allocating per reply.
//
// The writer side appends commands to a caller-owned buffer, so a load
// generator can pre-encode a command once and patch bytes in place. The
// reader side walks a reply byte by byte: it reports the reply's type, its
// integer / length / element count and, for simple strings and errors, the
// line itself, and skips everything nested inside aggregates.
package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// AppendCommand appends args as a RESP array of bulk strings to dst.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(args)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// AppendBulk appends s as a RESP bulk string to dst.
func AppendBulk(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendInline appends an inline command (space separated words, CRLF).
func AppendInline(dst []byte, args ...string) []byte {
	for i, a := range args {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, a...)
	}
	return append(dst, '\r', '\n')
}

// Kind is a reply's type byte.
type Kind byte

// Reply types (RESP2 first, then RESP3).
const (
	SimpleString Kind = '+'
	Error        Kind = '-'
	Integer      Kind = ':'
	BulkString   Kind = '$'
	Array        Kind = '*'
	Null         Kind = '_'
	Boolean      Kind = '#'
	Double       Kind = ','
	BigNumber    Kind = '('
	BulkError    Kind = '!'
	Verbatim     Kind = '='
	Map          Kind = '%'
	Set          Kind = '~'
	Push         Kind = '>'
	Attribute    Kind = '|'
)

// Reply describes one reply. Line aliases the reader's buffer and is valid
// only until the next call on the reader.
type Reply struct {
	Kind Kind
	// N is the integer for Integer, the length for BulkString/BulkError/
	// Verbatim (-1 = nil), the top-level element count for Array/Set/Push
	// (-1 = nil) and the pair count for Map.
	N int64
	// Line is the text of a SimpleString, Error, Double, BigNumber or
	// Boolean reply, without CRLF.
	Line []byte
}

// IsNil reports whether the reply is a nil bulk/array or a RESP3 null.
func (r *Reply) IsNil() bool {
	switch r.Kind {
	case Null:
		return true
	case BulkString, Array:
		return r.N < 0
	}
	return false
}

// ErrProtocol is wrapped by every error about malformed input.
var ErrProtocol = errors.New("resp: protocol error")

// MaxDepth bounds aggregate nesting.
const MaxDepth = 64

// MaxBulk bounds a bulk string's declared length (Redis's default
// proto-max-bulk-len is 512 MB).
const MaxBulk = 512 << 20

// Reader scans replies from a buffered stream.
type Reader struct {
	br *bufio.Reader
}

// NewReader returns a Reader over rd with a buffer of size bytes (at least
// 4096; lines longer than the buffer are rejected).
func NewReader(rd io.Reader, size int) *Reader {
	if size < 4096 {
		size = 4096
	}
	return &Reader{br: bufio.NewReaderSize(rd, size)}
}

// Buffered returns the number of bytes that can be read without a read
// call on the underlying reader.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// Reset discards buffered data and reads from rd from now on.
func (r *Reader) Reset(rd io.Reader) { r.br.Reset(rd) }

func protoErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, a...)...)
}

// line reads one CRLF-terminated line and returns it without the CRLF.
func (r *Reader) line() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, protoErr("line longer than %d bytes", r.br.Size())
		}
		if err == io.EOF && len(b) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(b) < 2 || b[len(b)-2] != '\r' {
		return nil, protoErr("line not terminated by CRLF")
	}
	return b[:len(b)-2], nil
}

// parseInt parses a decimal int64 without allocating.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, protoErr("empty integer")
	}
	neg := false
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, protoErr("bad integer")
		}
	}
	if len(b) > 19 {
		return 0, protoErr("integer too long")
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, protoErr("bad integer %q", b)
		}
		n = n*10 + uint64(c-'0')
	}
	if n > 1<<63-1 {
		if neg && n == 1<<63 {
			return -1 << 63, nil
		}
		return 0, protoErr("integer overflows int64")
	}
	if neg {
		return -int64(n), nil
	}
	return int64(n), nil
}

// Next reads one complete reply, skipping any nested elements, and
// describes it in *rep. It does not allocate for well-formed input.
func (r *Reader) Next(rep *Reply) error {
	return r.next(rep, 0)
}

func (r *Reader) next(rep *Reply, depth int) error {
	if depth > MaxDepth {
		return protoErr("aggregate nesting deeper than %d", MaxDepth)
	}
	ln, err := r.line()
	if err != nil {
		return err
	}
	if len(ln) == 0 {
		return protoErr("empty line")
	}
	kind := Kind(ln[0])
	rep.Kind = kind
	rep.N = 0
	rep.Line = nil
	body := ln[1:]
	switch rep.Kind {
	case SimpleString, Error, Double, BigNumber:
		rep.Line = body
		return nil
	case Boolean:
		if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
			return protoErr("bad boolean %q", body)
		}
		rep.Line = body
		return nil
	case Null:
		if len(body) != 0 {
			return protoErr("bad null")
		}
		rep.N = -1
		return nil
	case Integer:
		rep.N, err = parseInt(body)
		return err
	case BulkString, BulkError, Verbatim:
		n, err := parseInt(body)
		if err != nil {
			return err
		}
		rep.N = n
		if n < 0 {
			if n != -1 || rep.Kind != BulkString {
				return protoErr("bad bulk length %d", n)
			}
			return nil
		}
		if n > MaxBulk {
			return protoErr("bulk length %d too large", n)
		}
		return r.skipBulk(int(n))
	case Array, Set, Push, Map, Attribute:
		n, err := parseInt(body)
		if err != nil {
			return err
		}
		if n < 0 {
			if n != -1 || rep.Kind != Array {
				return protoErr("bad aggregate length %d", n)
			}
			rep.N = -1
			return nil
		}
		elems := n
		if rep.Kind == Map || rep.Kind == Attribute {
			if n > 1<<40 {
				return protoErr("aggregate length %d too large", n)
			}
			elems = 2 * n
		}
		var sub Reply
		for i := int64(0); i < elems; i++ {
			// The elements already buffered that are bulk strings (an
			// LRANGE reply's) are skipped in one pass over the buffer.
			k, err := r.skipBufferedBulks(elems - i)
			if err != nil {
				return err
			}
			if i += k; i == elems {
				break
			}
			if err := r.next(&sub, depth+1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
		}
		if rep.Kind == Attribute {
			// An attribute precedes the reply it annotates.
			return r.next(rep, depth+1)
		}
		rep.Kind = kind
		rep.N = n
		rep.Line = nil
		return nil
	}
	return protoErr("unknown reply type %q", byte(kind))
}

// skipBufferedBulks skips up to max consecutive bulk strings of non-negative
// length that lie whole in the buffer, without a read call, and returns
// how many it skipped. It stops at anything else (a nil bulk string,
// another type, a string not wholly buffered), which Next then reads.
func (r *Reader) skipBufferedBulks(max int64) (int64, error) {
	b, _ := r.br.Peek(r.br.Buffered())
	off, k := 0, int64(0)
	for k < max {
		c := b[off:]
		if len(c) < 4 || c[0] != '$' {
			break
		}
		i, n := 1, 0
		for i < len(c) && i <= 10 && c[i] >= '0' && c[i] <= '9' {
			n = n*10 + int(c[i]-'0')
			i++
		}
		if i == 1 || i > 10 || i+1 >= len(c) || c[i] != '\r' || c[i+1] != '\n' || n > MaxBulk {
			break // the slow path reads it, and says what is wrong with it
		}
		end := i + 2 + n + 2
		if end > len(c) {
			break
		}
		if c[end-2] != '\r' || c[end-1] != '\n' {
			return k, protoErr("bulk string not terminated by CRLF")
		}
		off += end
		k++
	}
	if off > 0 {
		r.br.Discard(off)
	}
	return k, nil
}

func (r *Reader) skipBulk(n int) error {
	if _, err := r.br.Discard(n); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	c1, err := r.br.ReadByte()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	c2, err := r.br.ReadByte()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if c1 != '\r' || c2 != '\n' {
		return protoErr("bulk string not terminated by CRLF")
	}
	return nil
}
