"""Versions: PyPI, locks, upgrade, bisect, add-cell, bless. Imports model, run and report."""
