package wordstat

import "unicode"

func words(text string) []string {
	var found []string
	current := []rune{}
	for _, r := range text + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			current = append(current, r)
		} else if len(current) > 0 {
			found = append(found, string(current))
			current = current[:0]
		}
	}
	return found
}

func Count(text string) int {
	return len(words(text))
}

func Longest(text string) string {
	longest := ""
	for _, word := range words(text) {
		if len([]rune(word)) > len([]rune(longest)) {
			longest = word
		}
	}
	return longest
}
