"""Local TCP ports for the servers tests start on 127.0.0.1 (Redis, uvicorn, gunicorn, ...)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """Return a TCP port nothing listens on right now on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepting(port: int) -> bool:
    """Tell whether something accepts TCP connections on ``127.0.0.1:port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), 0.2):
            return True
    except OSError:
        return False
