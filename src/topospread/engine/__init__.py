"""Tools built on the framework: one scheduling attempt explained (and later, simulations).

Pure: no file or network I/O; edges (CLI, cluster, extender) feed it objects.
"""
