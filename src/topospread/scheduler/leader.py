"""The scheduler's leader election: :mod:`topospread.client.leaderelection`.

One implementation of client-go's ``leaderelection``, shared with ``rebalance --apply``;
it lives in the client layer, below both edges. Re-exported here for the scheduler's
modules.
"""

from __future__ import annotations

from topospread.client.leaderelection import LeaderElector, LeaseRecord, micro_time

__all__ = ["LeaderElector", "LeaseRecord", "micro_time"]
