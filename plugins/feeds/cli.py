"""The feeds plugin's commands: ``hermes feeds …`` (subscriptions,
:mod:`hermes_feeds.subscriptions_cli`) and ``hermes feed USER`` with the person's verbs on
items (:mod:`hermes_feeds.reading_cli`), registered on the app in one place.
"""

from __future__ import annotations

import typer

from .reading_cli import dislike, explain, feed, like, unrate
from .subscriptions_cli import feeds_app


def register(app: typer.Typer) -> None:
    app.add_typer(feeds_app, name="feeds")
    app.command("feed")(feed)
    app.command("like")(like)
    app.command("dislike")(dislike)
    app.command("unrate")(unrate)
    app.command("explain")(explain)
