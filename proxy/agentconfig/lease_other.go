//go:build !linux

package agentconfig

import "os"

// lease: no file leases here; commit relies on its re-reads alone.
func lease(f *os.File) bool { return false }

func openedForWrite(f *os.File) bool { return false }

func opened(f *os.File) bool { return false }

func unlease(f *os.File) {}
