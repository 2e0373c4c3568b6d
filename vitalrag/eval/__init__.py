"""Evaluation: corpora, RepoBench-style tasks, metrics, tables and plots."""
