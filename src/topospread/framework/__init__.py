"""The scheduling framework: statuses, cycle state, extension points, runtime, configuration.

Pure: no I/O. Plugins live one layer up, in :mod:`topospread.plugins`.
"""
