"""The HNSW graph settings every approximate index of the bank uses (Chroma's and pgvector's).

Wider search than the libraries' defaults: recall against latency is measured in
benchmarks/RESULTS.md ("Retrieval").
"""

EF_SEARCH = 100
EF_CONSTRUCTION = 200
