"""RatioSpread, a topospread scheduler plugin from outside the package.

Installed, it registers ``RatioSpread`` under the ``topospread.plugins`` entry point
group (see ``pyproject.toml``); a KubeSchedulerConfiguration enables it by that name.
"""

from topospread_ratio_spread.args import (
    DEFAULT_POLICY_LABEL,
    Policy,
    Ratio,
    RatioSpreadArgs,
    decode_args,
)
from topospread_ratio_spread.plugin import NAME, RatioSpread, factory, new

__all__ = [
    "DEFAULT_POLICY_LABEL",
    "NAME",
    "Policy",
    "Ratio",
    "RatioSpread",
    "RatioSpreadArgs",
    "decode_args",
    "factory",
    "new",
]
