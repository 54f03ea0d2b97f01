"""Measurements on real devices: the worker, the transports that reach it, and gangs of hosts.

``main.py`` is the worker (``margin worker``), ``timing.py`` the part of it
that imports JAX, ``protocol.py`` the JSON-lines protocol both sides speak.
``transports.py`` turns a target of ``[tool.margin.targets]`` into the
command that starts a worker on each host (a local subprocess, ``ssh``, or
``gcloud compute tpus tpu-vm ssh``), ``client.py`` talks to one worker and
``gang.py`` runs one request on every host of a target at once.  Nothing
here imports JAX in the caller's process.

Adding a transport (Slurm, Ray ...): it only has to say how to start host
``i`` of ``n`` with the worker's arguments (:meth:`transports.Target.argv`)
and how to read its exit status (:meth:`transports.Target.explain_exit`);
the client, the gang's kill-and-restart and the cache are shared.
"""
