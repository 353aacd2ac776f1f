"""In-tree scheduling plugins, one package each, split by extension point as upstream."""
