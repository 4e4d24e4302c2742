package bracketdepth

import "testing"

func TestBalanced(t *testing.T) {
	cases := []struct {
		name  string
		input string
		want  bool
	}{
		{"empty", "", true},
		{"nested", "{[()]}", true},
		{"crossed", "([)]", false},
		{"unclosed", "((", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Balanced(tc.input); got != tc.want {
				t.Fatalf("Balanced(%q) = %v, want %v", tc.input, got, tc.want)
			}
		})
	}
}

func TestMaxDepth(t *testing.T) {
	got, err := MaxDepth("a(b[c]d)e{f}")
	if err != nil || got != 2 {
		t.Fatalf("MaxDepth = %d, %v; want 2, nil", got, err)
	}
}

func TestMaxDepthUnbalanced(t *testing.T) {
	if _, err := MaxDepth("(]"); err == nil {
		t.Fatal("MaxDepth(\"(]\") gave no error")
	}
}
