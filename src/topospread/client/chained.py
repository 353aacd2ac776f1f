"""Chained writes: a second write that follows the first once the first succeeded.

kube-scheduler records the ``Scheduled`` Event right after a successful Bind
(``bindingCycle`` in ``schedule_one.go``), and only then. Through the write processes
(:mod:`topospread.client.write_process`) the Event can go as a follow-up of the Binding:
the scheduling process hands both over in one frame, and the write process renders the
Event and sends it the moment the Binding's answer is a success. The scheduling process
then neither renders the Event nor sends a frame of its own for it. A follow-up is
rendered where it is sent, so what depends on the moment it is sent (an Event's
``eventTime`` and name) is as if the first write's answer had recorded it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from topospread.client.transport import Answer, Request, Response
from topospread.errors import ClusterError

__all__ = ["ChainedWrites", "FollowUp", "FollowUpDone", "Render"]

Render = Callable[..., tuple[Request, object]]
"""Makes the follow-up's request from :attr:`FollowUp.args`, with a token that comes back
with its answer (an Event's name and time, say)."""

FollowUpDone = Callable[[object | None, Response | ClusterError | None], object]
"""Told a follow-up's fate, once, as ``(token, answer)``:

- ``(None, None)``: it was not sent, because the first write failed;
- ``(token, answer)``: it was sent, and this is its answer (a success's body left out) or
  the error its send raised;
- ``(None, error)``: the first write succeeded, and then the follow-up was lost before it
  was answered (its write process exited or timed out, or it could not be rendered)."""


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A write to send once another succeeded, rendered where it is sent."""

    render: Render
    """A module-level function: it crosses to the write process by name, with :attr:`args`."""
    args: tuple[object, ...]
    done: FollowUpDone


@runtime_checkable
class ChainedWrites(Protocol):
    """A transport that sends a write without waiting and can chain a follow-up to it."""

    @property
    def chains(self) -> bool:
        """Whether :meth:`send_async_then` can ever send (a wrapper over a transport that
        cannot chain answers False)."""
        ...

    def send_async_then(self, request: Request, done: Answer, follow_up: FollowUp) -> bool:
        """``send_async`` of ``request``; then, once its answer is a success, ``follow_up``
        rendered and sent. False when the write cannot be sent at once: then neither is
        sent and ``follow_up.done`` is not called. When True, ``done`` gets the first
        write's answer before ``follow_up.done`` gets the follow-up's fate."""
        ...
