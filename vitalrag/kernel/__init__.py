"""The small helpers every layer shares, below all of them: code tokens and content
hashes (``text``), repository text made safe to show (``printable``), temporary
files and atomic replacement (``files``), the locks on an index folder
(``locks``) and whether a path holds tests (``paths``).
Nothing here imports from ``ingest``, ``graph``, ``retrieve``, ``allocate`` or
above; only ``vitalrag.errors``."""
