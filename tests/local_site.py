"""A small web site on this machine, standing in for the outside in the network tests (the
commands' proxy, the network by domain): each page says its path, the Host it was asked as, and
any proxy credentials that reached it; a POST is answered with its body in capitals."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the server's name for it
        body = f"page {self.path} host={self.headers.get('Host')} proxy-auth={self.headers.get('Proxy-Authorization')}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.upper())

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(address: str) -> Iterator[int]:
    """The site on `address` (a port chosen free), for the `with` block; its port."""
    server = http.server.ThreadingHTTPServer((address, 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
