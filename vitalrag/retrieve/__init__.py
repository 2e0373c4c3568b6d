"""Retrieval: views of code objects, and dense, sparse, graph-walk and fused retrievers
(opened over an index by ``vitalrag.index.Index``)."""
