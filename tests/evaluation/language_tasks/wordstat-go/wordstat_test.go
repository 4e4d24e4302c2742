package wordstat

import "testing"

func TestCount(t *testing.T) {
	cases := []struct {
		name string
		text string
		want int
	}{
		{"empty", "", 0},
		{"one", "word", 1},
		{"punctuation", "a, b; c.", 3},
		{"digits", "route 66 east", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Count(c.text); got != c.want {
				t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
			}
		})
	}
}

func TestLongest(t *testing.T) {
	if got := Longest("a bb ccc dd"); got != "ccc" {
		t.Errorf("Longest = %q, want ccc", got)
	}
}

func TestLongestFirstOfEqualLength(t *testing.T) {
	if got := Longest("ab cd"); got != "ab" {
		t.Errorf("Longest = %q, want ab", got)
	}
}
