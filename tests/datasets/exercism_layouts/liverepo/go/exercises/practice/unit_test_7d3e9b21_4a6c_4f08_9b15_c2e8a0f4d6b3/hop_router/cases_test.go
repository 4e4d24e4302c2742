package hoprouter

// The cases hop_router_test.go runs; this file declares no test of its own.
var cases = []struct {
	description string
	links       map[string][]string
	from, to    string
	expected    int
}{
	{"a node reaches itself", map[string][]string{"a": {"b"}}, "a", "a", 0},
	{"one link", map[string][]string{"a": {"b"}}, "a", "b", 1},
	{"links are undirected", map[string][]string{"a": {"b"}, "b": {"c"}}, "c", "a", 2},
	{"the shorter of two routes", map[string][]string{"a": {"b", "d"}, "b": {"c"}, "d": {"c"}, "c": {"e"}}, "a", "e", 3},
	{"unreachable", map[string][]string{"a": {"b"}, "c": {"d"}}, "a", "d", -1},
}
