"""Strands creates OpenTelemetry spans around every graph and node; nothing exports unless an exporter is
configured, and the cell has no network either way. The SDK is switched off here, before the plugin's import
check imports strands, so a user's OTEL_* exporter settings can never reach a collector; st_kit does the same
for an adapter run as a program."""

import st_kit  # noqa: F401 (OpenTelemetry off before strands imports)
