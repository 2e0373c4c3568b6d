"""C++: the C rules (``c``) with C++'s extraction support; C and C++ are one family."""

from __future__ import annotations

from vitalrag.ingest.lang.tags.c import CPP_SUPPORT as SUPPORT
from vitalrag.ingest.lang.tags.c import FACT_TYPES, prepare, resolve

__all__ = ["FACT_TYPES", "SUPPORT", "prepare", "resolve"]
