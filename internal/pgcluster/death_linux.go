package pgcluster

import "syscall"

// setDeathSignal makes the kernel stop the server when this process dies, so
// a killed test run or dev server leaves no orphan postgres behind.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGQUIT }
