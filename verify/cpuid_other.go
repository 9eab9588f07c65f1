//go:build !amd64

package verify

func cpuidFlags() []string { return nil }
