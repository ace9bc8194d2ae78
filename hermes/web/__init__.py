"""The web app (starlette)."""
