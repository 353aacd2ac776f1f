"""The Kubernetes object model: typed objects, selectors, quantities, validation.

Pure: no I/O, no client library; everything here works on values already in memory.
"""
