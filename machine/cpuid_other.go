//go:build !amd64

package machine

func cpuidFlags() []string { return nil }
