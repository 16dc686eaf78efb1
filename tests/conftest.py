"""Harness tests: run with no agent framework installed."""
