package hoprouter

// Hops returns the fewest links from `from` to `to`, or -1.
func Hops(links map[string][]string, from, to string) int {
	panic("Please implement Hops")
}

// MaxHops is the longest route accepted.
func MaxHops() int {
	panic("Please implement MaxHops")
}
