"""Haystack sends usage telemetry (PostHog) from the import on unless HAYSTACK_TELEMETRY_ENABLED is off, and
its first run writes a user id to ~/.haystack: the variable is set here, before the plugin's import check
imports haystack (the cell has no network either way). hs_kit sets it too, for an adapter run as a program."""

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"
