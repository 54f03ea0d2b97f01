"""Measurements on real devices: the worker, the transports that reach it, and gangs of hosts.

``main.py`` is the worker (``margin worker``), ``timing.py`` the part of it
that imports JAX, ``protocol.py`` the JSON-lines protocol both sides speak.
``transports.py`` turns a target of ``[tool.margin.targets]`` into the
command that starts a worker on each host (a local subprocess, ``ssh``, or
``gcloud compute tpus tpu-vm ssh``), ``client.py`` talks to one worker and
``gang.py`` runs one request on every host of a target at once.
``ray_client.py`` reaches hosts as Ray actors instead (``margin[ray]``), each
running the worker loop in ``ray_host.py``.  Nothing here imports JAX in the
caller's process, nor Ray unless a Ray target measures.

Adding a transport (Slurm, submitit ...): a command-line one only has to say
how to start host ``i`` of ``n`` with the worker's arguments
(:meth:`transports.Target.argv`) and how to read its exit status
(:meth:`transports.Target.explain_exit`); any other implements a
:class:`client.WorkerLink` (start, send a line, kill, feed the worker's
lines) as ``ray_client.RayLink`` does.  The client's deadlines and
heartbeats, the gang's kill-and-restart and the cache are shared.
"""
