package wordstat

func Count(text string) int {
	return -1
}

func Longest(text string) string {
	return "?"
}
