"""Renderers: result sets in, text out. Deterministic (same inputs, byte-identical output)."""
