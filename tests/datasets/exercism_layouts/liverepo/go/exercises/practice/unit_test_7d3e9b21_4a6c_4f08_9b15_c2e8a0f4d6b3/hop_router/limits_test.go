package hoprouter

import (
	"fmt"
	"testing"
)

func chain(n int) map[string][]string {
	links := map[string][]string{}
	for i := 0; i < n; i++ {
		links[fmt.Sprint(i)] = []string{fmt.Sprint(i + 1)}
	}
	return links
}

func TestMaxHops(t *testing.T) {
	if got := MaxHops(); got != 16 {
		t.Fatalf("MaxHops() = %d, want 16", got)
	}
}

func TestARouteAtTheLimitIsAccepted(t *testing.T) {
	if got := Hops(chain(16), "0", "16"); got != 16 {
		t.Fatalf("Hops over 16 links = %d, want 16", got)
	}
}

func TestARouteOverTheLimitIsRefused(t *testing.T) {
	if got := Hops(chain(17), "0", "17"); got != -1 {
		t.Fatalf("Hops over 17 links = %d, want -1", got)
	}
}
