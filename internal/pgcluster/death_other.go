//go:build !linux

package pgcluster

import "syscall"

// setDeathSignal has no equivalent outside Linux; Stop is called on exit.
func setDeathSignal(*syscall.SysProcAttr) {}
