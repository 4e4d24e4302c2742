from collections import deque


def hops(graph, start, goal):
    seen = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            return seen[node]
        for neighbour in graph.get(node, ()):
            if neighbour not in seen:
                seen[neighbour] = seen[node] + 1
                queue.append(neighbour)
    return -1
