"""Running independent simulations: in one process, a process pool over every local core,
or a Ray cluster (``pip install 'topospread[ray]'``). An edge: it imports the engine."""

from topospread.execution.runs import run_sweep

__all__ = ["run_sweep"]
