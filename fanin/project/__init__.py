"""The user's project: audit of their graph, probe --here in their environment. Imports everything below."""
