package hoprouter

import "testing"

func TestHops(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.description, func(t *testing.T) {
			if got := Hops(tc.links, tc.from, tc.to); got != tc.expected {
				t.Fatalf("Hops(%v, %q, %q) = %d, want %d", tc.links, tc.from, tc.to, got, tc.expected)
			}
		})
	}
}
