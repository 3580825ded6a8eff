"""`--serve`: hand a built page to a browser over loopback.

Why at all, when the page opens from disk: on a remote machine (a cluster login node) the file is
not on the reader's disk; an ssh port forward to a loopback server is the usual way there. Only
127.0.0.1 is bound, and only the one page is served (no directory listing, no other file).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

HOST = "127.0.0.1"


def _handler(page: Path) -> type[BaseHTTPRequestHandler]:
    class PageHandler(BaseHTTPRequestHandler):
        """GET / (or /<the page's name>) answers the page; anything else is 404."""

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.split("?", 1)[0] not in ("/", f"/{page.name}"):
                self.send_error(404, "only the page is served here")
                return
            body = page.read_bytes()  # read per request: a rebuilt page is served as it now is
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # quiet: the CLI prints the URL once

    return PageHandler


class ViewServer:
    """A loopback HTTP server for one page, running in a background thread until `stop()` (or the
    end of a `with` block). `url` is what to open; `wait()` blocks until Ctrl-C, for the CLI."""

    def __init__(self, page: Path, port: int = 0) -> None:
        self.page = Path(page)
        if not self.page.is_file():
            raise FileNotFoundError(f"{self.page}: no such page (build it with build_view first)")
        self._server = ThreadingHTTPServer((HOST, port), _handler(self.page))
        self._thread = threading.Thread(target=self._server.serve_forever, name="tomacs-view", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def wait(self) -> None:
        """Serve until interrupted (Ctrl-C), then stop."""
        try:
            while self._thread.is_alive():
                self._thread.join(timeout=0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def __enter__(self) -> ViewServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def serve(page: Path, port: int = 0) -> ViewServer:
    """Start serving `page` on 127.0.0.1:`port` (0: a free port) and return the running server;
    its `url` is the address to open. The CLI's `--serve` prints `url` and calls `wait()`."""
    return ViewServer(page, port)
