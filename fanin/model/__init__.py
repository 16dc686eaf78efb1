"""The data: probes, observations, result sets, the matrix and registry, the one comparison. Imports nothing of fanin above it."""
