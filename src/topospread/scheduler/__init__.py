"""``topospread scheduler``: the engine as a kube-scheduler that a cluster can run.

An edge layer like the command line: informers (:mod:`.informer`) keep a cache
(:mod:`.cache`) whose Snapshot the engine's cycle reads; a scheduling queue as upstream's
(:mod:`.queue`); the scheduler loop with async binding, failure reporting and preemption
(:mod:`.scheduler`); leader election on a Lease (:mod:`.leader`); Prometheus metrics
(:mod:`.metrics`); the component with its lifecycle and health endpoints (:mod:`.app`).
The core (model, framework, plugins, engine) never imports this package.
"""
