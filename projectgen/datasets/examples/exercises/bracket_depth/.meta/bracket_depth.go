package bracketdepth

import "errors"

var closers = map[rune]rune{')': '(', ']': '[', '}': '{'}

// MaxDepth returns how deeply the brackets of s nest, or an error when they are unbalanced.
func MaxDepth(s string) (int, error) {
	var stack []rune
	deepest := 0
	for _, r := range s {
		switch r {
		case '(', '[', '{':
			stack = append(stack, r)
			if len(stack) > deepest {
				deepest = len(stack)
			}
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != closers[r] {
				return 0, errors.New("unbalanced brackets")
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return 0, errors.New("unclosed brackets")
	}
	return deepest, nil
}

// Balanced says whether the brackets of s are balanced.
func Balanced(s string) bool {
	_, err := MaxDepth(s)
	return err == nil
}
