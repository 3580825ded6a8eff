"""`tomacs view`: a run, a sweep or debate transcripts as one self-contained HTML page (docs/view.md).

from tomacs.view import build_view, serve
page = build_view(Path("outputs/runs/my_run"))          # -> outputs/runs/my_run/view.html
with serve(page, port=0) as server: print(server.url)   # optional: http.server on 127.0.0.1
"""

from tomacs.view.build import DEFAULT_MAX_EPISODES, DEFAULT_MAX_TOTAL, build_view, view_data
from tomacs.view.serve import ViewServer, serve

__all__ = ["DEFAULT_MAX_EPISODES", "DEFAULT_MAX_TOTAL", "ViewServer", "build_view", "serve", "view_data"]
