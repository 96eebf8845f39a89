"""Evaluation: datasets, WildDoc metrics, the resumable benchmark runner, scoring and reports."""
