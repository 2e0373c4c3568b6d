"""VitalRAG: a repository context engine for coding agents.

Index repositories into a code graph of canonical code objects, retrieve
multi-view evidence tagged with node ids, and allocate a bounded context with
the VITAL-RAG method.
"""

from __future__ import annotations

__version__ = "0.1.0"
