"""The TaintToleration plugin: keeps pods off nodes whose taints they do not tolerate."""

from topospread.plugins.tainttoleration.taint_toleration import (
    ERR_REASON_NOT_MATCH,
    ERR_REASON_UNTOLERATED,
    NAME,
    PRE_SCORE_STATE_KEY,
    TaintToleration,
    new,
)

__all__ = [
    "ERR_REASON_NOT_MATCH",
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "TaintToleration",
    "new",
]
