from collections import OrderedDict


class RouteCache:
    """Least-recently-used cache of routes keyed by (origin, destination)."""

    def __init__(self, capacity):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.routes = OrderedDict()

    def put(self, origin, destination, route):
        key = (origin, destination)
        self.routes[key] = list(route)
        self.routes.move_to_end(key)
        while len(self.routes) > self.capacity:
            self.routes.popitem(last=False)

    def get(self, origin, destination):
        key = (origin, destination)
        if key not in self.routes:
            return None
        self.routes.move_to_end(key)
        return self.routes[key]

    def __len__(self):
        return len(self.routes)
