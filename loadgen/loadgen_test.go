package loadgen

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseTests(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"set,get", []string{"SET", "GET"}},
		{"GET,Set", []string{"SET", "GET"}}, // redis-benchmark's order, case-insensitive
		{"ping", []string{"PING_INLINE", "PING_MBULK"}},
		{"ping_mbulk", []string{"PING_MBULK"}},
		{"lrange", []string{lpushForLRANGE, "LRANGE_100", "LRANGE_300", "LRANGE_500", "LRANGE_600"}},
		{"lrange_300, set", []string{"SET", lpushForLRANGE, "LRANGE_300"}},
		{"mset,xadd,mixed", []string{"MSET", "XADD", "MIXED"}},
	} {
		got, err := ParseTests(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseTests(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if got, _ := ParseTests(""); len(got) != len(Tests())-1 || got[0] != "PING_INLINE" {
		t.Errorf("ParseTests(\"\") = %q, want redis-benchmark's full list", got)
	}
	for _, bad := range []string{"sett", ",", "set,bogus"} {
		if _, err := ParseTests(bad); err == nil {
			t.Errorf("ParseTests(%q) accepted", bad)
		}
	}
	if _, err := resolveTests([]string{"SET", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("resolveTests with an unknown name: %v", err)
	}
	if d, err := resolveTests([]string{"lrange_100", "MSET (10 keys)", "ping"}); err != nil || len(d) != 4 || d[1].name != "MSET" {
		t.Errorf("resolveTests(titles, aliases) = %v, %v", d, err)
	}
}

// TestEncodings checks the commands byte for byte against what
// redis-benchmark sends (redisFormatCommand of its format strings).
func TestEncodings(t *testing.T) {
	cfg := Config{}
	cfg.setDefaults()
	want := map[string]string{
		"PING_INLINE": "PING\r\n",
		"PING_MBULK":  "*1\r\n$4\r\nPING\r\n",
		"SET":         "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n",
		"GET":         "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n",
		"INCR":        "*2\r\n$4\r\nINCR\r\n$20\r\ncounter:__rand_int__\r\n",
		"LPUSH":       "*3\r\n$5\r\nLPUSH\r\n$6\r\nmylist\r\n$3\r\nxxx\r\n",
		"RPOP":        "*2\r\n$4\r\nRPOP\r\n$6\r\nmylist\r\n",
		"SADD":        "*3\r\n$4\r\nSADD\r\n$5\r\nmyset\r\n$20\r\nelement:__rand_int__\r\n",
		"HSET":        "*4\r\n$4\r\nHSET\r\n$6\r\nmyhash\r\n$20\r\nelement:__rand_int__\r\n$3\r\nxxx\r\n",
		"ZADD":        "*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$1\r\n0\r\n$20\r\nelement:__rand_int__\r\n",
		"ZPOPMIN":     "*2\r\n$7\r\nZPOPMIN\r\n$6\r\nmyzset\r\n",
		"LRANGE_500":  "*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n499\r\n",
		"XADD":        "*5\r\n$4\r\nXADD\r\n$8\r\nmystream\r\n$1\r\n*\r\n$7\r\nmyfield\r\n$3\r\nxxx\r\n",
		"MSET":        "*21\r\n$4\r\nMSET\r\n" + strings.Repeat("$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n", 10),
	}
	for name, w := range want {
		d, _ := lookupTest(name)
		if got := string(d.commands(&cfg)[0].buf); got != w {
			t.Errorf("%s encodes as %q, want %q", name, got, w)
		}
	}
}

// TestBatchPatching: random keys are patched in place as 12 digits below
// the keyspace, independently per placeholder, pipelined to exact depth.
func TestBatchPatching(t *testing.T) {
	cfg := Config{Keyspace: 1000}
	cfg.setDefaults()
	d, _ := lookupTest("MSET")
	tt := &test{cfg: &cfg, def: d, cmds: d.commands(&cfg)}
	k := tt.newKeyGen(42)
	c := &conn{}
	buf := tt.batch(c, k, 4, make([]uint8, 4))
	if n := bytes.Count(buf, []byte("*21\r\n$4\r\nMSET")); n != 4 {
		t.Fatalf("batch of 4 holds %d MSETs", n)
	}
	keys := regexp.MustCompile(`key:(\d{12})\r\n`).FindAllSubmatch(buf, -1)
	if len(keys) != 40 || bytes.Contains(buf, []byte(randPlaceholder)) {
		t.Fatalf("found %d patched keys (want 40) in %q", len(keys), buf)
	}
	distinct := map[string]bool{}
	for _, m := range keys {
		if !bytes.HasPrefix(m[1], []byte("000000000")) {
			t.Errorf("key %s is not below 1000", m[1])
		}
		distinct[string(m[1])] = true
	}
	if len(distinct) < 30 {
		t.Errorf("only %d distinct keys of 40: placeholders are not drawn independently", len(distinct))
	}
	// A shorter final batch uses a prefix of the same buffer.
	if short := tt.batch(c, k, 2, nil); len(short) != len(buf)/2 {
		t.Errorf("batch of 2 is %d bytes, want %d", len(short), len(buf)/2)
	}
	// Without a keyspace the placeholder stays, as in redis-benchmark.
	cfg0 := Config{}
	cfg0.setDefaults()
	t0 := &test{cfg: &cfg0, def: d, cmds: d.commands(&cfg0)}
	if b := t0.batch(&conn{}, t0.newKeyGen(1), 1, nil); bytes.Count(b, []byte("key:__rand_int__")) != 10 {
		t.Errorf("without -r the keys must stay key:__rand_int__: %q", b)
	}
}

func TestKeyPatterns(t *testing.T) {
	count := func(pattern string) (top int, mean float64) {
		cfg := Config{Keyspace: 1000, KeyPattern: pattern}
		if err := cfg.setDefaults(); err != nil {
			t.Fatal(err)
		}
		d, _ := lookupTest("MIXED")
		k := (&test{cfg: &cfg, def: d}).newKeyGen(7)
		hits := map[uint64]int{}
		sum := 0.0
		const n = 20000
		for i := 0; i < n; i++ {
			v := k.key()
			if v >= 1000 {
				t.Fatalf("%s: key %d outside keyspace", pattern, v)
			}
			hits[v]++
			sum += float64(v)
		}
		for _, h := range hits {
			top = max(top, h)
		}
		return top, sum / n
	}
	uTop, uMean := count("uniform")
	gTop, gMean := count("gaussian")
	zTop, zMean := count("zipf")
	if uTop > 60 || uMean < 470 || uMean > 530 {
		t.Errorf("uniform: top key %d hits, mean %.0f", uTop, uMean)
	}
	if gTop < 2*uTop || gMean < 480 || gMean > 520 {
		t.Errorf("gaussian: top key %d hits (uniform %d), mean %.0f", gTop, uTop, gMean)
	}
	if zTop < 1000 || zMean > 300 {
		t.Errorf("zipf: top key %d hits, mean %.0f: not skewed to low keys", zTop, zMean)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Clients: -1}, {Pipeline: -2}, {Ratio: "1-10"}, {Ratio: "0:0"}, {KeyPattern: "pareto"}, {Rate: -5}, {Duration: -time.Second},
	} {
		if err := c.setDefaults(); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestOutput(t *testing.T) {
	res := []Result{{Test: "LRANGE_100", Title: "LRANGE_100 (first 100 elements)", OpsPerSec: 12345.678, AvgMs: 0.25, MinMs: 0.01, P50Ms: 0.2, P95Ms: 0.5, P99Ms: 1, P999Ms: 2.5, MaxMs: 3}}
	var b bytes.Buffer
	if err := WriteCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	want := `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms","p999_latency_ms"` + "\n" +
		`"LRANGE_100 (first 100 elements)","12345.68","0.250","0.010","0.200","0.500","1.000","3.000","2.500"` + "\n"
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
	rps, err := ReadCSV(&b)
	if err != nil || rps["LRANGE_100 (first 100 elements)"] != 12345.68 {
		t.Errorf("ReadCSV = %v, %v", rps, err)
	}
	b.Reset()
	if err := WriteTable(&b, res); err != nil || !strings.Contains(b.String(), "12345.68") {
		t.Errorf("table: %q %v", b.String(), err)
	}
}

func TestDecodeHist(t *testing.T) {
	h := newHist()
	for i := int64(1); i <= 1000; i++ {
		h.RecordValue(i)
	}
	enc, err := h.Encode(0x1c849304)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHist(string(enc))
	if err != nil || got.TotalCount() != 1000 || got.ValueAtQuantile(50) != h.ValueAtQuantile(50) {
		t.Errorf("round trip: %v count %d", err, got.TotalCount())
	}
	if _, err := DecodeHist("not base64!"); err == nil {
		t.Error("DecodeHist accepted garbage")
	}
}
