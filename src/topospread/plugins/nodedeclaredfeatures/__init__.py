"""NodeDeclaredFeatures: a pod that needs a node feature fits only nodes declaring it."""

from topospread.plugins.nodedeclaredfeatures.node_declared_features import (
    ERR_REASON,
    NAME,
    REGISTERED_FEATURES,
    NodeDeclaredFeatures,
    declared_features,
    new,
    required_features,
)

__all__ = [
    "ERR_REASON",
    "NAME",
    "REGISTERED_FEATURES",
    "NodeDeclaredFeatures",
    "declared_features",
    "new",
    "required_features",
]
