package resp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestAppendCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "*1\r\n$4\r\nPING\r\n"},
		{[]string{"SET", "key:__rand_int__", "xxx"}, "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n"},
		{[]string{"GET", ""}, "*2\r\n$3\r\nGET\r\n$0\r\n\r\n"},
		{[]string{"LRANGE", "mylist", "0", "99"}, "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$2\r\n99\r\n"},
	} {
		if got := string(AppendCommand(nil, tc.args...)); got != tc.want {
			t.Errorf("AppendCommand(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := string(AppendInline([]byte("x"), "PING")); got != "xPING\r\n" {
		t.Errorf("AppendInline = %q", got)
	}
	long := strings.Repeat("a", 1000)
	if got := string(AppendBulk(nil, long)); got != "$1000\r\n"+long+"\r\n" {
		t.Errorf("AppendBulk long wrong: %q...", got[:12])
	}
}

func TestReaderKnownReplies(t *testing.T) {
	type want struct {
		kind Kind
		n    int64
		line string
	}
	in := "+OK\r\n" +
		"-ERR wrong number of arguments\r\n" +
		":42\r\n" +
		":-7\r\n" +
		"$3\r\nxxx\r\n" +
		"$-1\r\n" +
		"$0\r\n\r\n" +
		"*3\r\n$1\r\na\r\n$2\r\nbb\r\n:1\r\n" +
		"*-1\r\n" +
		"*0\r\n" +
		"*2\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n*1\r\n+x\r\n" +
		"_\r\n" +
		"#t\r\n" +
		",3.14\r\n" +
		"(123456789012345678901234567890\r\n" +
		"!5\r\nERR x\r\n" +
		"=7\r\ntxt:abc\r\n" +
		"%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n" +
		"~1\r\n+a\r\n" +
		">2\r\n+message\r\n+hi\r\n" +
		"|1\r\n+key\r\n+val\r\n:9\r\n" +
		"$5\r\nab\r\nc\r\n" // binary-safe bulk containing CRLF
	wants := []want{
		{SimpleString, 0, "OK"},
		{Error, 0, "ERR wrong number of arguments"},
		{Integer, 42, ""},
		{Integer, -7, ""},
		{BulkString, 3, ""},
		{BulkString, -1, ""},
		{BulkString, 0, ""},
		{Array, 3, ""},
		{Array, -1, ""},
		{Array, 0, ""},
		{Array, 2, ""},
		{Null, -1, ""},
		{Boolean, 0, "t"},
		{Double, 0, "3.14"},
		{BigNumber, 0, "123456789012345678901234567890"},
		{BulkError, 5, ""},
		{Verbatim, 7, ""},
		{Map, 2, ""},
		{Set, 1, ""},
		{Push, 2, ""},
		{Integer, 9, ""},
		{BulkString, 5, ""},
	}
	r := NewReader(strings.NewReader(in), 0)
	var rep Reply
	for i, w := range wants {
		if err := r.Next(&rep); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if rep.Kind != w.kind || rep.N != w.n || string(rep.Line) != w.line {
			t.Errorf("reply %d = {%q %d %q}, want {%q %d %q}", i, rep.Kind, rep.N, rep.Line, w.kind, w.n, w.line)
		}
	}
	if err := r.Next(&rep); err != io.EOF {
		t.Errorf("after last reply: err = %v, want io.EOF", err)
	}
}

func TestReaderMalformed(t *testing.T) {
	for _, in := range []string{
		"OK\r\n",   // no type byte
		"+OK\n",    // LF only
		":12a\r\n", // bad integer
		":99999999999999999999\r\n",
		"$3\r\nabcd\r\n", // wrong bulk terminator
		"$-2\r\n",        // bad length
		"*-5\r\n",
		"#x\r\n",
		"\r\n",
		"$" + "600000000" + "\r\n",
	} {
		var rep Reply
		err := NewReader(strings.NewReader(in), 0).Next(&rep)
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("Next(%q) err = %v, want a protocol error", in, err)
		}
	}
	for _, in := range []string{"$3\r\nab", "*2\r\n+a\r\n", "+OK"} {
		var rep Reply
		err := NewReader(strings.NewReader(in), 0).Next(&rep)
		if err != io.ErrUnexpectedEOF {
			t.Errorf("Next(%q) err = %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
	deep := strings.Repeat("*1\r\n", MaxDepth+2) + ":1\r\n"
	var rep Reply
	if err := NewReader(strings.NewReader(deep), 0).Next(&rep); !errors.Is(err, ErrProtocol) {
		t.Errorf("deep nesting: err = %v, want protocol error", err)
	}
}

func TestReaderNoAllocs(t *testing.T) {
	var buf bytes.Buffer
	for i := 0; i < 1000; i++ {
		buf.WriteString("+OK\r\n$3\r\nxxx\r\n:5\r\n*3\r\n$3\r\nabc\r\n$3\r\nabc\r\n$3\r\nabc\r\n")
	}
	data := buf.Bytes()
	rd := bytes.NewReader(data)
	r := NewReader(rd, 16384)
	var rep Reply
	allocs := testing.AllocsPerRun(100, func() {
		rd.Reset(data)
		r.Reset(rd)
		for {
			if err := r.Next(&rep); err != nil {
				break
			}
		}
	})
	if allocs > 0 {
		t.Errorf("Reader.Next allocates: %v allocs per 4000 replies", allocs)
	}
}

func BenchmarkReaderLRANGE100(b *testing.B) {
	var one []byte
	one = append(one, "*100\r\n"...)
	for i := 0; i < 100; i++ {
		one = append(one, "$3\r\nxxx\r\n"...)
	}
	data := bytes.Repeat(one, 100)
	rd := bytes.NewReader(data)
	r := NewReader(rd, 65536)
	var rep Reply
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		rd.Reset(data)
		r.Reset(rd)
		for j := 0; j < 100; j++ {
			if err := r.Next(&rep); err != nil || rep.N != 100 {
				b.Fatal(err, rep.N)
			}
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n$1\r\na\r\n:2\r\n",
		"*-1\r\n", "_\r\n", "#t\r\n", ",1.5\r\n", "%1\r\n+a\r\n+b\r\n", "|1\r\n+a\r\n+b\r\n:1\r\n", "=3\r\nabc\r\n",
		"*1\r\n*1\r\n*1\r\n:1\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte("*3\r\n$3\r\nabc\r\n$0\r\n\r\n$-1\r\n"))
	f.Add([]byte("*2\r\n$3\r\nabcX\n$1\r\na\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), 0)
		// The same bytes a byte at a time: nothing is ever buffered ahead,
		// so arrays go through the element-by-element path; both must read
		// the same replies and fail alike.
		slow := NewReader(iotest.OneByteReader(bytes.NewReader(data)), 0)
		var rep, srep Reply
		for i := 0; i < 1000; i++ {
			err := r.Next(&rep)
			serr := slow.Next(&srep)
			if (err == nil) != (serr == nil) || err == nil && (rep.Kind != srep.Kind || rep.N != srep.N) {
				t.Fatalf("step %d: buffered reader %q %d (%v), byte-at-a-time %q %d (%v)", i, rep.Kind, rep.N, err, srep.Kind, srep.N, serr)
			}
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrProtocol) {
					t.Fatalf("unexpected error type %T: %v", err, err)
				}
				return
			}
			switch rep.Kind {
			case BulkString, Array:
				if rep.N < -1 {
					t.Fatalf("negative length %d", rep.N)
				}
			case Integer, SimpleString, Error, Null, Boolean, Double, BigNumber, BulkError, Verbatim, Map, Set, Push:
			default:
				t.Fatalf("Next returned unknown kind %q without error", rep.Kind)
			}
			// Re-encoding a simple reply must round-trip through the reader.
			if rep.Kind == SimpleString {
				enc := append(append([]byte{'+'}, rep.Line...), '\r', '\n')
				var rep2 Reply
				if err := NewReader(bytes.NewReader(enc), 0).Next(&rep2); err == nil && string(rep2.Line) != string(rep.Line) {
					t.Fatalf("round trip %q -> %q", rep.Line, rep2.Line)
				}
			}
		}
	})
}
