"""Context allocation: which code objects get a place in a bounded model input,
and how many tokens each gets (VITAL-RAG, arXiv 2607.26937, section 5).

    >>> from vitalrag.allocate import allocate
    >>> result = allocate("Complete f using helper", scored_views, policy="vital")
    >>> result.text          # C(q)
    >>> result.record        # AllocationRecord: every view's fate, every slot's tokens

Retrieving and then allocating (``context``) is ``vitalrag.context``, above
this package and ``retrieve``.
"""

from __future__ import annotations

from vitalrag.allocate.api import allocate
from vitalrag.allocate.base import Allocation, AllocationParams, AllocationRequest, Policy, token_authority
from vitalrag.allocate.controls import POLICIES, get_policy, policy_names
from vitalrag.allocate.provenance import ObjectKey, identifier_tokens, object_key
from vitalrag.allocate.render import Rendering, render_prefix, render_window
from vitalrag.allocate.source import (
    GraphObjectSource,
    MappingObjectSource,
    ObjectSource,
    ObjectText,
    ViewObjectSource,
)
from vitalrag.allocate.vital import VitalPolicy, quotient
from vitalrag.model import AllocationRecord, SlotRecord, ViewDecision

__all__ = [
    "POLICIES", "Allocation", "AllocationParams", "AllocationRecord", "AllocationRequest",
    "GraphObjectSource", "MappingObjectSource", "ObjectKey", "ObjectSource", "ObjectText",
    "Policy", "Rendering", "SlotRecord", "ViewDecision", "ViewObjectSource", "VitalPolicy",
    "allocate", "get_policy", "identifier_tokens", "object_key",
    "policy_names", "quotient", "render_prefix", "render_window", "token_authority",
]

