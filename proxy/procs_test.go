package proxy

import (
	"runtime"
	"testing"
)

// TestReserveProcs: the relay gets a P more than its two loops, unless the
// user set GOMAXPROCS.
func TestReserveProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))

	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(2)
	reserveProcs()
	if got := runtime.GOMAXPROCS(0); got != relayProcs {
		t.Errorf("GOMAXPROCS %d after reserveProcs, want %d", got, relayProcs)
	}
	runtime.GOMAXPROCS(8)
	if reserveProcs(); runtime.GOMAXPROCS(0) != 8 {
		t.Errorf("reserveProcs lowered GOMAXPROCS 8 to %d", runtime.GOMAXPROCS(0))
	}

	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	if reserveProcs(); runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("GOMAXPROCS=1 set by the user became %d", runtime.GOMAXPROCS(0))
	}
}
