"""Which failed model calls are worth another try, and how long to wait before it.

Decided from HTTP status codes and exception class names, so neither openai nor httpx is imported.
"""
from __future__ import annotations

_TRANSIENT_NAMES = frozenset({
    # openai / anthropic SDKs
    "RateLimitError", "APITimeoutError", "APIConnectionError", "InternalServerError", "ServiceUnavailableError",
    "OverloadedError",
    # httpx
    "TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "NetworkError",
    "ConnectError", "ReadError", "WriteError", "RemoteProtocolError",
    # builtins and requests
    "TimeoutError", "ConnectionError", "Timeout",
})
_TRANSIENT_STATUS = frozenset({408, 409, 425, 429})


def status_code(exc: BaseException) -> int | None:
    """The HTTP status of an API error, from `status_code`/`status`/`http_status` or its response."""
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "http_status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: 408/409/425/429/5xx, timeouts and connection errors (also when wrapped as a cause)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        status = status_code(current)
        if status is not None:
            return status in _TRANSIENT_STATUS or status >= 500
        if {cls.__name__ for cls in type(current).__mro__} & _TRANSIENT_NAMES:
            return True
        current = current.__cause__  # explicit wrapping only: an error raised while handling another is its own
    return False


def retry_after(exc: BaseException) -> float | None:
    """The seconds a server asked us to wait (its Retry-After header), or None."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = headers.get("retry-after") if headers is not None else None
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def retry_delay(exc: BaseException, attempt: int, backoff: float, max_backoff: float) -> float:
    """The wait after failed try number `attempt`: backoff, 2*backoff, ... capped at `max_backoff`,
    or longer (up to the cap) when the server sends Retry-After."""
    delay = min(backoff * 2 ** (attempt - 1), max_backoff)
    hinted = retry_after(exc)
    if hinted is not None:
        delay = max(delay, min(hinted, max_backoff))
    return delay
