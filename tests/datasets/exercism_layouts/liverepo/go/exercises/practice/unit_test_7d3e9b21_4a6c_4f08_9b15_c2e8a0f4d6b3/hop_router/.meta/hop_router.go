package hoprouter

// Hops returns the fewest links from `from` to `to` (breadth-first), or -1 when unreachable or too far.
func Hops(links map[string][]string, from, to string) int {
	seen := map[string]bool{from: true}
	frontier := []string{from}
	for depth := 0; len(frontier) > 0 && depth <= MaxHops(); depth++ {
		var next []string
		for _, node := range frontier {
			if node == to {
				return depth
			}
			for _, near := range neighbours(links, node) {
				if !seen[near] {
					seen[near] = true
					next = append(next, near)
				}
			}
		}
		frontier = next
	}
	return -1
}

// MaxHops is the longest route accepted.
func MaxHops() int { return 16 }

func neighbours(links map[string][]string, node string) []string {
	found := append([]string{}, links[node]...)
	for other, list := range links {
		for _, n := range list {
			if n == node {
				found = append(found, other)
			}
		}
	}
	return found
}
