"""The small helpers every layer shares, below all of them: code tokens and content
hashes (``text``), temporary files and atomic replacement (``files``), and the
locks on an index folder (``locks``). Nothing here imports from ``ingest``,
``graph``, ``retrieve``, ``allocate`` or above; only ``vitalrag.errors``."""
