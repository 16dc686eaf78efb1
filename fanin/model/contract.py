"""The contract between the harness and a cell's process: the FANIN_* variables the harness sets for it.

Both sides import these names: the harness where it starts a cell (fanin.run.one_cell, node_cell,
services, isolation) and the cell's side (fanin.plugin, fanin.probe, fanin.run.environment); `fanin record`
and the plugin it loads into the user's tests (fanin.project.record, record_plugin). The
exit codes of the contract are fanin.model.exits. Runs inside cells, so it stays importable on Python 3.10.
"""

POSTGRES_DSN = "FANIN_POSTGRES_DSN"  # a libpq connection string without dbname: the harness's server
POSTGRES_READY = "FANIN_POSTGRES_READY"  # a file: "ok" once the server answers, or why it did not start
POSTGRES_TAG = "FANIN_POSTGRES_TAG"  # per cell run: part of every observation's database name
POSTGRES_VERSION = "FANIN_POSTGRES_VERSION"  # the server's version, recorded in the cell's environment

NETWORK_ISOLATION = "FANIN_NETWORK_ISOLATION"  # which guard keeps the cell off the network (fanin.run.isolation)
NETWORK_ISOLATION_UNSET = "in-process block only (not run by the harness)"  # a bare pytest run has only that one

FAST_EXIT = "FANIN_FAST_EXIT"  # "1": the plugin ends the process once every file is written (no interpreter teardown)
SUITE_COMMIT = "FANIN_SUITE_COMMIT"  # the suite's commit when the run started (or given by a harness that copied it)
NODE_OUT = "FANIN_NODE_OUT"  # a Node cell: the directory its probes write their observations into
# A framework whose registry entry has `live_threads = true`: the release before this one (the matrix's cell before
# it on the same Python, or `upgrade --from`'s), whose interpreter writes the stores a live-thread probe resumes.
EARLIER_VERSION = "FANIN_EARLIER_VERSION"  # that release's version (unset: the run has no earlier release)
EARLIER_PYTHON = "FANIN_EARLIER_PYTHON"  # its venv's interpreter (unset while EARLIER_VERSION is set: a defect)
# A Node cell's earlier release (fanin.run.runtimes.NodeRunner): its npm ci directory, whose node_modules a writer
# script's imports resolve to, and the Node that cell runs with (its named release, else the machine's node). Both
# unset while EARLIER_VERSION is set: the directory could not be built (a defect: the probe is probe-error).
EARLIER_NODE_DIR = "FANIN_EARLIER_NODE_DIR"
EARLIER_NODE = "FANIN_EARLIER_NODE"

# `fanin record` and the plugin it loads into the user's own test run (fanin.project.record_plugin).
RECORD_RESULT = "FANIN_RECORD_RESULT"  # the file the plugin writes its facts to
RECORD_SUITES = "FANIN_RECORD_SUITES"  # fanin's suites/: the recorders and inspectors
RECORD_FRAMEWORKS = "FANIN_RECORD_FRAMEWORKS"  # JSON {key: {"module", "package"}}: the registry's frameworks

# Every variable of the contract, for the test that no other module spells one.
VARIABLES = (
    POSTGRES_DSN,
    POSTGRES_READY,
    POSTGRES_TAG,
    POSTGRES_VERSION,
    NETWORK_ISOLATION,
    FAST_EXIT,
    SUITE_COMMIT,
    NODE_OUT,
    EARLIER_VERSION,
    EARLIER_PYTHON,
    EARLIER_NODE_DIR,
    EARLIER_NODE,
    RECORD_RESULT,
    RECORD_SUITES,
    RECORD_FRAMEWORKS,
)
