"""The error of a fetch that produced no usable body."""

from __future__ import annotations

from ..errors import HermesError


class FetchError(HermesError):
    """A fetch that produced no usable body; ``str(exc)`` is the one-line reason.

    ``kind`` is the generic class of the failure ("connection failed", "HTTP 404",
    "refused: private address", …) with nothing a server said in it: what a guarded fetch
    reports (see :func:`hermes.ingest.fetch.afetch`), so an agent cannot use a feed to read
    or probe a service. ``status`` is the HTTP status when there was one; ``retry_after``
    the raw ``Retry-After`` header of a 429/503 answer (the pipeline turns it into a backoff).
    """

    def __init__(
        self, message: str, *, kind: str | None = None, status: int | None = None, retry_after: str | None = None
    ):
        super().__init__(message)
        self.kind = kind or message
        self.status = status
        self.retry_after = retry_after

    def generic(self) -> FetchError:
        """The same failure told by its class only."""
        return FetchError(self.kind, status=self.status, retry_after=self.retry_after)
