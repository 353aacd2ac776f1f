"""Helpers shared by the score plugins (upstream ``pkg/scheduler/framework/plugins/helper``)."""

from topospread.plugins.helper.normalize_score import default_normalize_score, go_div

__all__ = ["default_normalize_score", "go_div"]
