"""DefaultBinder: the Bind extension point's default plugin.

Upstream ``pkg/scheduler/framework/plugins/defaultbinder`` (v1.37.1) creates a ``Binding``
(the pod's namespace, name and uid; the target Node) through the clientset, and returns
the client's error as an Error status. Here the write goes through ``Handle.binding``
(:meth:`~topospread.framework.binding.BindingPort.bind_pod`): the API server for the live
scheduler, the in-memory cluster for the simulator and the planners. The status keeps
the port's error, so the loop tells a pod that is gone (404, 409) from a failure to retry.

Where the port can send the Binding without waiting for the answer
(:class:`~topospread.framework.binding.AsyncBindingPort`: the live scheduler's write
processes), :meth:`DefaultBinder.bind_async` does, so no thread is held per bind (as a
goroutine per binding cycle holds none upstream).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from topospread.framework.binding import AsyncBindingPort, BindingError
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interfaces import Handle, Plugin
from topospread.framework.status import Status, as_status
from topospread.model.objects import Pod
from topospread.plugins import names

__all__ = ["NAME", "DefaultBinder", "new"]

NAME: Final = names.DEFAULT_BINDER


class DefaultBinder:
    """Binds through the handle's binding port."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        binding = handle.binding
        self._async_binding = (
            binding if isinstance(binding, AsyncBindingPort) and binding.sends_async else None
        )

    @property
    def name(self) -> str:
        """``DefaultBinder``."""
        return NAME

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """``Bind``: None once bound; an Error status carrying the port's error."""
        del state
        binding = self._handle.binding
        if binding is None:
            return as_status("no binding port: this command binds no pod")
        try:
            binding.bind_pod(pod, node_name)
        except BindingError as error:
            return as_status(error)
        return None

    @property
    def binds_async(self) -> bool:
        """Whether the binding port sends without waiting (the live write processes)."""
        return self._async_binding is not None

    def bind_async(
        self,
        state: CycleState,
        pod: Pod,
        node_name: str,
        done: Callable[[Status | None], None],
    ) -> bool:
        """``Bind`` through :meth:`AsyncBindingPort.bind_pod_async` when the port has it
        and can send now; ``done`` gets what :meth:`bind` would return."""
        del state
        binding = self._async_binding
        if binding is None:
            return False

        def answered(error: BindingError | None) -> None:
            done(None if error is None else as_status(error))

        return binding.bind_pod_async(pod, node_name, answered)


def new(args: object | None, handle: Handle, features: Features) -> Plugin:
    """The factory (``defaultbinder.New``); DefaultBinder takes no args."""
    del args, features
    return DefaultBinder(handle)
