"""Decoding a response's ``Content-Encoding`` with memory bounded at every step.

httpx inflates each network chunk completely, through every layer of a stacked
``Content-Encoding: gzip, gzip, gzip``, before its caller sees a byte: 300 bytes on the wire
became 2 GB in memory before the size cap could be checked, and a single 1 GB gzip bomb cost
about 130 MB. So the fetcher reads the raw body and decodes it here: one content coding at
most (more is refused — no feed server needs them), gzip or deflate only (the only ones
hermes asks for), inflated at most :data:`STEP` bytes at a time so the caller counts every
piece against its cap before the next one exists.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from .errors import FetchError

ACCEPT_ENCODING = "gzip, deflate"
STEP = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS}
CODINGS = (*_WBITS, "deflate")


def content_codings(values: list[str]) -> list[str]:
    """The codings named by ``Content-Encoding`` header values, outermost last, without
    ``identity``."""
    return [c for v in values for c in (t.strip().lower() for t in v.split(",")) if c and c != "identity"]


class Decoder:
    """Incremental decoder of one content coding (or none)."""

    def __init__(self, coding: str | None):
        self.coding = coding
        self._z = zlib.decompressobj(_WBITS[coding]) if coding in _WBITS else None
        self._head = b""  # "deflate": the first bytes, until they tell zlib from raw deflate
        self._trailing = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of ``data`` (each at most :data:`STEP` bytes, produced lazily)."""
        if self.coding is None:
            if data:
                yield data
            return
        if self._z is None:
            data = self._start_deflate(data)
            if self._z is None:
                return
        try:
            yield from self._inflate(data)
        except zlib.error as exc:
            raise FetchError(
                f"undecodable response body: bad {self.coding} data ({exc})", kind="undecodable response body"
            ) from None

    def finish(self) -> Iterator[bytes]:
        """What the decoder still holds once the body has ended."""
        return self.decode(b"")

    def _start_deflate(self, data: bytes) -> bytes:
        # "deflate" is meant to be a zlib stream, but many servers send raw deflate: the
        # first two bytes tell (a zlib header names method 8 and is a multiple of 31).
        self._head += data
        if len(self._head) < 2 and data:
            return b""
        cmf, flg = (self._head + b"\0\0")[:2]
        wbits = zlib.MAX_WBITS if cmf & 0x0F == 8 and (cmf * 256 + flg) % 31 == 0 else -zlib.MAX_WBITS
        self._z = zlib.decompressobj(wbits)
        data, self._head = self._head, b""
        return data

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        while not self._trailing:
            if self._z.eof:
                data = self._z.unused_data + data
                if len(data) < len(GZIP_MAGIC) and GZIP_MAGIC.startswith(data):
                    self._z = _Ended(data)  # between two gzip members, or at the end
                    return
                if self.coding == "deflate" or data[:2] != GZIP_MAGIC:
                    self._trailing = True  # bytes after the stream are ignored, as browsers do
                    return
                self._z = zlib.decompressobj(_WBITS[self.coding])  # a further gzip member
            out = self._z.decompress(data, STEP)
            # At the end of a stream what is left is in unused_data (the tail may repeat it).
            data = b"" if self._z.eof else self._z.unconsumed_tail
            if out:
                yield out
            if not self._z.eof and not data and len(out) < STEP:
                return


class _Ended:
    """A finished stream holding the start of what may be the next gzip member."""

    eof = True

    def __init__(self, unused_data: bytes):
        self.unused_data = unused_data


def decoder_for(values: list[str]) -> Decoder:
    """The decoder for a response's ``Content-Encoding`` values, or :class:`FetchError`
    for stacked or unsupported codings."""
    codings = content_codings(values)
    if len(codings) > 1:
        raise FetchError(
            f"refused: more than one content coding ({', '.join(codings)[:80]})",
            kind="refused: more than one content coding",
        )
    if codings and codings[0] not in CODINGS:
        raise FetchError(
            f"unsupported content coding {codings[0][:40]!r} (hermes asks for {ACCEPT_ENCODING})",
            kind="unsupported content coding",
        )
    return Decoder(codings[0] if codings else None)


__all__ = ["ACCEPT_ENCODING", "STEP", "Decoder", "content_codings", "decoder_for"]
