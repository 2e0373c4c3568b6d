"""``Progress``: how long work says how far it has got. The library calls it;
the CLI draws it (``cli.output``), or nobody does (``None``)."""

from __future__ import annotations

from collections.abc import Callable

#: ``progress(stage, done, total)``: ``done`` of the ``total`` steps of ``stage`` are finished
Progress = Callable[[str, int, int], None]
