"""Feature gates that change scheduling decisions, as explicit constructor inputs.

Defaults are the gate defaults of the Kubernetes version topospread is faithful to
(:data:`topospread.KUBERNETES_VERSION`); there is no module-level mutable state.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Features"]


@dataclass(frozen=True, slots=True)
class Features:
    """The scheduler-relevant feature gates (``feature.Features`` upstream)."""

    enable_node_inclusion_policy_in_pod_topology_spread: bool = True
    """GA and locked on since 1.33: nodeAffinityPolicy / nodeTaintsPolicy are honoured."""
    enable_match_label_keys_in_pod_topology_spread: bool = True
    """Beta, on by default since 1.27: matchLabelKeys are ANDed into the selector."""
    enable_taint_toleration_comparison_operators: bool = False
    """Alpha since 1.35, off by default: tolerations with Gt/Lt operators."""
    enable_pod_level_resources: bool = True
    """Pod-level ``spec.resources`` count towards requests."""
    enable_storage_capacity_scoring: bool = True
    """Beta, on by default since 1.37: VolumeBinding scores nodes (its PreScore no longer
    skips), so it reports a score — 0 for a pod without volumes — on every feasible node."""
    enable_volume_limit_scaling: bool = True
    """Beta, on by default since 1.37: NodeVolumeLimits rejects a node that lacks a CSI
    driver whose CSIDriver sets ``preventPodSchedulingIfMissing``."""
