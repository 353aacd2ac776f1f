"""Frames between a process and its helper processes: each a pickle behind its length.

A frame is ``(id, payload)``: the id names the request (or the stream) the payload
belongs to. The helper processes (:mod:`~topospread.client.write_process`,
:mod:`~topospread.client.watch_process`) are this program's own children, so pickle is
safe here: nothing else writes to their pipes.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any, Final

from topospread.client.cpus import pin_child

__all__ = ["HEADER", "FrameWriter", "read_frames", "start_helper", "write_frame"]

HEADER: Final = struct.Struct("!I")
"""A frame's length, before its pickle."""


def start_helper(
    module: str, argument: str, core: int | None
) -> tuple[subprocess.Popen[bytes], IO[bytes], int]:
    """``python -m module ARGUMENT TO_FD FROM_FD [CORE]`` with a pipe to it and one from
    it: the process, the writing end of the pipe to it, and the descriptor of the pipe
    from it. Kept to ``core``, when given, from its start (:func:`pin_child`)."""
    to_child_read, to_child_write = os.pipe()
    from_child_read, from_child_write = os.pipe()
    command = [
        sys.executable,
        "-m",
        module,
        argument,
        str(to_child_read),
        str(from_child_write),
        "" if core is None else str(core),
    ]
    process = subprocess.Popen(
        command, pass_fds=(to_child_read, from_child_write), stdin=subprocess.DEVNULL
    )
    if core is not None:
        pin_child(process.pid, {core})
    os.close(to_child_read)
    os.close(from_child_write)
    return process, open(to_child_write, "wb"), from_child_read


def encode_frame(frame_id: int, payload: object) -> bytes:
    """One frame's bytes."""
    data = pickle.dumps((frame_id, payload), protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def write_frame(stream: IO[bytes], lock: threading.Lock, payload: object) -> None:
    """``payload`` (an ``(id, payload)`` pair) written and flushed at once, under ``lock``."""
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    with lock:
        stream.write(HEADER.pack(len(data)) + data)
        stream.flush()


def take_frames(pending: bytes) -> tuple[list[tuple[int, Any]], bytes]:
    """The whole frames at the start of ``pending``, and what follows them."""
    frames = []
    start = 0
    header_size = HEADER.size
    while len(pending) - start >= header_size:
        (size,) = HEADER.unpack_from(pending, start)
        end = start + header_size + size
        if end > len(pending):
            break
        frames.append(pickle.loads(memoryview(pending)[start + header_size : end]))
        start = end
    return frames, pending[start:]


def read_frames(stream: io.BufferedReader) -> Iterator[tuple[int, Any]]:
    """``(id, payload)`` frames until the pipe closes."""
    # Whatever the pipe holds is read at once (the answers come several to a write) and
    # its whole frames are taken apart before the next read blocks.
    pending = b""
    while True:
        data = stream.read1(1 << 16)
        if not data:
            return
        frames, pending = take_frames(pending + data if pending else data)
        yield from frames


class FrameWriter:
    """Writes frames to the parent together, ``linger`` seconds after the first of them:
    each write of the pipe wakes a thread of the parent, which takes the GIL from its
    scheduling thread."""

    def __init__(self, out: IO[bytes], linger: float) -> None:
        self.out = out
        self.linger = linger
        self.frames: list[bytes] = []
        self.ready = threading.Condition()
        self.closed = False
        self.thread = threading.Thread(target=self._run, name="frames", daemon=True)
        self.thread.start()

    def put(self, frame_id: int, payload: object) -> None:
        """Queue one frame (from any thread)."""
        frame = encode_frame(frame_id, payload)
        with self.ready:
            self.frames.append(frame)
            if len(self.frames) == 1:
                self.ready.notify()

    def close(self) -> None:
        """Write what is queued, then stop."""
        with self.ready:
            self.closed = True
            self.ready.notify()
        self.thread.join()

    def _run(self) -> None:
        while True:
            with self.ready:
                while not self.frames and not self.closed:
                    self.ready.wait()
                if not self.frames:
                    return
            if self.linger:
                time.sleep(self.linger)
            with self.ready:
                frames, self.frames = self.frames, []
            # The parent is gone: nobody reads the frames.
            with contextlib.suppress(OSError, ValueError):
                self.out.write(b"".join(frames))
                self.out.flush()
