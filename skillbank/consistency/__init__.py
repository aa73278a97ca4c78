"""Consistency metrics for LLM agents run several times on the same tasks (pass^k, pass@k)."""
