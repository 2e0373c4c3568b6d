"""The small helpers every layer shares, below all of them: code tokens and content
hashes (``text``), repository text made safe to show (``printable``), temporary
files and atomic replacement (``files``), the locks on an index folder
(``locks``), whether a path holds tests (``paths``) and how long work reports
how far it has got (``progress``).
Nothing here imports from ``ingest``, ``graph``, ``retrieve``, ``allocate`` or
above; only ``vitalrag.errors``."""
