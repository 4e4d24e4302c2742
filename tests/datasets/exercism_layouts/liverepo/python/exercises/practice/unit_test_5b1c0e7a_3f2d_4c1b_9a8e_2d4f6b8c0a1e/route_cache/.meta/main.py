from .route_cache import RouteCache


def run(commands):
    cache = RouteCache(2)
    output = []
    for line in commands:
        parts = line.split()
        if parts[0] == "PUT":
            cache.put(parts[1], parts[2], parts[3].split(","))
        else:
            route = cache.get(parts[1], parts[2])
            output.append("MISS" if route is None else ",".join(route))
    return output