"""The cyclic garbage collector, tuned for a scheduler's heap.

Nearly all of a scheduler's heap is its cache: decoded Pods and Nodes, acyclic and long
lived, freed by reference counting when replaced. CPython's collector walks them anyway:
with its default thresholds a 5,000-Node, 5,000-pod run made eight full collections of
110-225 ms each, 1.65 s of a 6.5 CPU-s scheduler process that holds the GIL for its loop
(BENCHMARKS.md). So the process freezes what it imported and what it listed (frozen
objects are still freed by reference counting, the collector just no longer walks them),
collects the young generation less often, and sweeps everything, frozen objects
included, only when the scheduling queue has been idle.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

# Allocations (net of deallocations) between young collections, then young collections
# per middle one and middle ones per full one (CPython's defaults: 700, 10, 10). With the
# defaults a 5,000-pod run made 781 young collections (0.16 s) and 70 middle ones
# (0.22 s) besides the full ones; with these, 167 young ones and 13 middle ones.
YOUNG_THRESHOLD = 50_000
MIDDLE_THRESHOLD = 20
OLD_THRESHOLD = 10


class HeapKeeper:
    """Freezes the long-lived heap at start and after the informers' first list, and
    sweeps it fully when idle at most once per ``sweep_interval`` seconds (so cyclic
    garbage among frozen objects is not kept for ever)."""

    def __init__(
        self, *, sweep_interval: float = 600.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.sweep_interval = sweep_interval
        self._clock = clock
        self._last_sweep = clock()
        self.sweeps = 0

    def started(self) -> None:
        """After imports: modules, classes and functions live as long as the process."""
        gc.freeze()
        gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)

    def synced(self) -> None:
        """After every informer listed once: the cache as listed is the long-lived heap.
        No collection first: what the lists left is acyclic, and the next sweep takes any
        cycle that is not."""
        gc.freeze()
        self._last_sweep = self._clock()

    def idle(self) -> bool:
        """The scheduling queue had nothing to pop: a full sweep, when one is due."""
        if self._clock() - self._last_sweep < self.sweep_interval:
            return False
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._last_sweep = self._clock()
        self.sweeps += 1
        return True
