"""The HNSW graph settings every approximate index of the bank uses (Chroma's and pgvector's).

Wider search than the libraries' defaults (docs/decisions/0008).
"""

EF_SEARCH = 100
EF_CONSTRUCTION = 200
