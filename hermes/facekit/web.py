"""What the web face shares with plugins' routes (``hermes_register_routes``): the
database of a request. The app (:func:`hermes.web.app.create_app`) keeps its path in
``request.app.state.db_path``."""

from __future__ import annotations

from ..storage.db import get_db


def request_db(request):
    """Open the app's database for one request (close it when done)."""
    return get_db(request.app.state.db_path)
