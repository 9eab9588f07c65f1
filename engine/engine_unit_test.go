package engine

import (
	"archive/tar"
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestDrainStreamFindsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"errorDetail", `{"stream":"Loading layer"}` + "\n" + `{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}`, "unexpected EOF"},
		{"error only", `{"status":"x"}{"error":"open /var/lib/docker/tmp/x: no such file"}`, "no such file"},
		{"not json", `{"stream":"a"}oops plain text`, "oops plain text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := drainStream(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("drainStream error = %v, want one containing %q", err, tc.want)
			}
		})
	}
	last, err := drainStream(strings.NewReader(`{"stream":"Loaded image: a:b\n"}`))
	if err != nil || len(last) != 1 || last[0] != "Loaded image: a:b" {
		t.Fatalf("clean stream: last=%q err=%v", last, err)
	}
}

func TestServerCommand(t *testing.T) {
	cmd, port, err := serverCommand(ServerSpec{Network: "host", Port: 7001, Args: []string{"--io-threads", "2"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--port", "7001", "--bind", "127.0.0.1", "--io-threads", "2"}
	if port != 7001 || !slices.Equal(cmd, want) {
		t.Fatalf("host: got %q port %d, want %q port 7001", cmd, port, want)
	}
	cmd, port, err = serverCommand(ServerSpec{Network: "host"})
	if err != nil || port == 0 {
		t.Fatalf("host with port 0: port %d err %v, want a free port", port, err)
	}
	cmd, port, err = serverCommand(ServerSpec{Network: "bridge"})
	if err != nil || port != 6379 || slices.Contains(cmd, "--bind") {
		t.Fatalf("bridge: %q %d %v", cmd, port, err)
	}
	cmd, port, err = serverCommand(ServerSpec{Network: "none", SocketDir: "/tmp/x"})
	if err != nil || port != 0 || !slices.Contains(cmd, "/run/redis-sock/redis.sock") || cmd[slices.Index(cmd, "--port")+1] != "0" {
		t.Fatalf("none: %q %d %v", cmd, port, err)
	}
	if _, _, err := serverCommand(ServerSpec{Network: "none"}); err == nil {
		t.Fatal("none without SocketDir: no error")
	}
	if _, _, err := serverCommand(ServerSpec{Network: "macvlan"}); err == nil || !strings.Contains(err.Error(), "macvlan") {
		t.Fatalf("unknown network: %v", err)
	}
	cmd, _, _ = serverCommand(ServerSpec{Network: "bridge", Cmd: []string{"sleep", "infinity"}, Args: []string{"x"}})
	if !slices.Equal(cmd, []string{"sleep", "infinity"}) {
		t.Fatalf("Cmd override: %q", cmd)
	}
}

func TestHostConfig(t *testing.T) {
	hc, err := hostConfig(ServerSpec{Network: "bridge", Seccomp: "unconfined", CPUs: "1", SocketDir: "/tmp/s"}, 6379)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(hc.SecurityOpt, []string{"seccomp=unconfined"}) || hc.CpusetCpus != "1" || string(hc.NetworkMode) != "bridge" {
		t.Fatalf("host config: %+v", hc)
	}
	if len(hc.PortBindings) != 1 || !slices.Equal(hc.Binds, []string{"/tmp/s:/run/redis-sock"}) {
		t.Fatalf("bindings: %+v %q", hc.PortBindings, hc.Binds)
	}
	for _, b := range hc.PortBindings {
		if b[0].HostIP.String() != "127.0.0.1" {
			t.Fatalf("published on %s, want 127.0.0.1", b[0].HostIP)
		}
	}
	hc, _ = hostConfig(ServerSpec{Network: "host", Seccomp: "default"}, 7000)
	if len(hc.SecurityOpt) != 0 || len(hc.PortBindings) != 0 {
		t.Fatalf("host/default: %+v", hc)
	}
	if _, err := hostConfig(ServerSpec{Network: "host", Seccomp: "strict"}, 1); err == nil {
		t.Fatal("unknown seccomp: no error")
	}
}

func TestFirstFile(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "os-release", Typeflag: tar.TypeSymlink, Linkname: "../usr/lib/os-release"})
	tw.Close()
	_, link, err := firstFile(&buf)
	if err != nil || link != "../usr/lib/os-release" {
		t.Fatalf("symlink: %q %v", link, err)
	}
	buf.Reset()
	tw = tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "f", Typeflag: tar.TypeReg, Size: 5, Mode: 0o644})
	tw.Write([]byte("hello"))
	tw.Close()
	data, _, err := firstFile(&buf)
	if err != nil || string(data) != "hello" {
		t.Fatalf("regular: %q %v", data, err)
	}
}
