"""The exit codes: of every fanin command (documented in the README), and of a cell's pytest under fanin's plugin.

One place, below everything that returns them, so a command needs no runner to say "same" or "bad input".
Runs inside cells too (the plugin exits with its own codes), so it stays importable on Python 3.10.
"""

SAME = 0  # every observation as the reference says (or the command succeeded)
CHANGED = 1  # a behaviour changed, a probe is new or broken: look at the table
BAD_INPUT = 2  # the command line or a file was wrong; nothing ran
NOT_RUN = 3  # the cell could not run (install, import, services, the disk); see its marker
INTERRUPTED = 130  # Ctrl-C or SIGTERM; every previous result set kept

# pytest's exit status when fanin's plugin ends a cell's run itself (read by the runner, never shown).
IMPORT_FAILED_EXIT = 6  # the framework does not import in this cell
WRITE_FAILED_EXIT = 7  # the run's own files cannot be written (a full disk)
