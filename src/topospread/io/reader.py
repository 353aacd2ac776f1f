"""Reading the bytes of an input: regular files and standard input only, with a size cap.

A FIFO, socket or device is refused after ``os.stat`` and before ``open`` (opening a FIFO
for reading blocks until a writer appears; ``/dev/zero`` never ends). The file is opened
with ``O_NONBLOCK`` and checked again with ``fstat`` on the descriptor, so a path swapped
for a FIFO between the two checks cannot block either. Reads are streamed in chunks and
stop at :data:`MAX_INPUT_BYTES`: a file that grows past it is refused without being read
whole.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO, Final

from topospread.errors import DecodeError

__all__ = ["MAX_INPUT_BYTES", "STDIN", "display_name", "read_input"]

MAX_INPUT_BYTES: Final = 2 * 1024**3 - 1
"""The largest input read: 2 GiB less a byte (a kubectl capture of 5,000 nodes and 50,000
pods is about 0.6 GB as indented JSON)."""

STDIN: Final = "-"
"""The path that means standard input."""

_CHUNK: Final = 1 << 20


def display_name(path: Path | str) -> str:
    """How an input is named in messages (standard input as ``<stdin>``)."""
    return "<stdin>" if str(path) == STDIN else str(path)


def _kind_of(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO); give a regular file or standard input"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device; give a regular file or standard input"
    if stat.S_ISSOCK(mode):
        return "is a socket; give a regular file or standard input"
    return "is not a regular file"


def _read_capped(stream: BinaryIO, source: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise DecodeError(source, message=f"larger than the {limit:,}-byte input limit")
    return b"".join(chunks)


def read_input(path: Path | str, *, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file, or of standard input for ``-``; raises :class:`DecodeError`."""
    source = display_name(path)
    if str(path) == STDIN:
        try:
            return _read_capped(sys.stdin.buffer, source, limit)
        except OSError as exc:
            raise DecodeError(source, message=exc.strerror or "cannot read") from None
    try:
        problem = _kind_of(os.stat(path).st_mode)
    except FileNotFoundError:
        raise DecodeError(source, message="no such file") from None
    except OSError as exc:
        raise DecodeError(source, message=exc.strerror or "cannot read") from None
    except ValueError:  # a NUL byte in the name
        raise DecodeError(source, message="not a usable file name") from None
    if problem is not None:
        raise DecodeError(source, message=problem)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise DecodeError(source, message=exc.strerror or "cannot open") from None
    with os.fdopen(fd, "rb") as stream:
        try:
            info = os.fstat(fd)
            problem = _kind_of(info.st_mode)
            if problem is not None:
                raise DecodeError(source, message=problem)
            if info.st_size > limit:
                raise DecodeError(source, message=f"larger than the {limit:,}-byte input limit")
            return _read_capped(stream, source, limit)
        except OSError as exc:
            raise DecodeError(source, message=exc.strerror or "cannot read") from None
