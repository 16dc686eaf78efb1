"""Running cells: venvs from locks, one cell's pytest, services, isolation, the journal, identity. Imports model."""
