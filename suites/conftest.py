"""Probe suites. The fanin plugin (loaded by suites/pytest.ini) records observations and blocks
the network; this file only makes the shared gate helpers importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
