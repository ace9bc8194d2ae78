"""The web app (starlette). Plugins add routes through ``hermes_register_routes``."""

from __future__ import annotations

from starlette.applications import Starlette

from .. import config


def create_app(db_path: str | None = None) -> Starlette:
    """Build the app for one database; ``request.app.state.db_path`` tells routes which."""
    from ..plugins import get_plugin_manager

    app = Starlette()
    app.state.db_path = str(config.db_path(db_path))
    get_plugin_manager().hook.hermes_register_routes(app=app)
    return app


def request_db(request):
    """Open the app's database for one request (close it when done)."""
    from ..db import get_db

    return get_db(request.app.state.db_path)
