"""A cell's venv is exactly its lock on exactly its Python: drift, a new lock or another Python rebuild it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fanin.run import install_roots, venvs


def test_drift_a_new_lock_or_another_python_is_rebuilt_before_use(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0\n")
    venv = venvs.ensure("cell", sys.executable, lock, root=tmp_path)
    assert venvs.installed(venv) == {"iniconfig": "2.0.0"}

    # Someone installs a package by hand: the venv no longer is its lock.
    subprocess.run(
        [venvs.uv_binary(), "pip", "install", "--quiet", "--python", str(venv.python), "six==1.16.0"], check=True
    )
    assert venvs.drift(venv, lock, venvs._interpreter(sys.executable)) == ["six: 1.16.0 -> not in the lock"]
    venv = venvs.ensure("cell", sys.executable, lock, root=tmp_path)
    assert venvs.installed(venv) == {"iniconfig": "2.0.0"}

    # The lock changes.
    lock.write_text("iniconfig==2.1.0\n")
    assert venvs.installed(venvs.ensure("cell", sys.executable, lock, root=tmp_path)) == {"iniconfig": "2.1.0"}

    # The venv was built by another Python than the matrix names now: it is made anew.
    stamp = venv.path / venvs.STAMP
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "python": "3.0.0"}))
    marker = venv.path / "made-by-the-old-python"
    marker.write_text("x")
    venvs.ensure("cell", sys.executable, lock, root=tmp_path)
    assert not marker.exists()


def test_pins_follow_markers(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "colorama==0.4.6 ; sys_platform == 'win32' \\\n    --hash=sha256:00\n"
        "exceptiongroup==1.2.2 ; python_full_version < '3.11' \\\n"
        "psycopg[binary]==3.2.9 \\\n    --hash=sha256:11\n"
    )
    linux_311 = {"sys_platform": "linux", "python_full_version": "3.11.7", "python_version": "3.11"}
    assert venvs.pins(lock, linux_311) == {"psycopg": "3.2.9"}
    linux_310 = {**linux_311, "python_full_version": "3.10.13", "python_version": "3.10"}
    assert venvs.pins(lock, linux_310) == {"exceptiongroup": "1.2.2", "psycopg": "3.2.9"}


def test_an_edited_lock_rebuilds_the_venv_and_its_wrong_hash_is_refused(tmp_path: Path) -> None:
    """Issue 21 case 2: a package already at its pin is not re-checked by uv, so an edited lock starts from nothing."""
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0\n")
    venv = venvs.ensure("cell", sys.executable, lock, root=tmp_path)
    assert venvs.installed(venv) == {"iniconfig": "2.0.0"}
    lock.write_text("iniconfig==2.0.0 \\\n    --hash=sha256:" + "0" * 64 + "\n")  # same pin, a hash that is wrong
    with pytest.raises(venvs.InstallError, match="installing the lock failed"):
        venvs.ensure("cell", sys.executable, lock, root=tmp_path)
    assert not (venv.path / venvs.STAMP).exists()  # never looks finished: the next use tries again


def test_another_cells_lock_is_refused_before_anything_is_installed(tmp_path: Path) -> None:
    """Issue 21 case 3: a lock pinning another version of the cell's framework installs nothing (exit 3)."""
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    with pytest.raises(venvs.InstallError) as refused:
        venvs.ensure("cell", sys.executable, lock, root=tmp_path, framework=("iniconfig", "2.1.0"))
    assert str(refused.value).startswith(
        "install refused: lock.txt pins iniconfig 2.0.0, but the cell is iniconfig 2.1.0"
    )
    assert refused.value.exit_code == 3
    assert not (tmp_path / "cell").exists()
    with pytest.raises(venvs.InstallError, match=r"lock\.txt does not pin six"):
        venvs.check_lock_names(lock, "six", "1.0")


def test_a_framework_file_edited_inside_the_venv_rebuilds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: every version still as pinned, but a module of the framework changed by hand: rebuilt from the lock.

    uv links a venv's files to its cache, so the edit below reaches the cached copy: this test uses a cache of its own.
    """
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0\n")
    venv = venvs.ensure("cell", sys.executable, lock, root=tmp_path, framework=("iniconfig", "2.0.0"))
    (module,) = venv.path.glob("lib/python*/site-packages/iniconfig/__init__.py")
    pristine = module.read_text()
    module.write_text("raise ImportError('edited by hand')\n")
    assert venvs.drift(venv, lock, {}) == []  # the versions alone see nothing
    venvs.ensure("cell", sys.executable, lock, root=tmp_path, framework=("iniconfig", "2.0.0"))
    assert module.read_text() == pristine


def test_bytecode_is_linked_from_a_sibling_venv_and_a_stale_one_is_compiled_again(tmp_path: Path) -> None:
    """A sibling venv's .pyc for the very same source file is shared; one that does not match is recompiled."""
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0\n")
    first = venvs.ensure("first", sys.executable, lock, root=tmp_path)
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    tag = f"cpython-{sys.version_info[0]}{sys.version_info[1]}"

    def paths(venv: venvs.Venv) -> tuple[Path, Path]:
        source = venv.path / "lib" / f"python{minor}" / "site-packages" / "iniconfig" / "__init__.py"
        return source, source.parent / "__pycache__" / f"__init__.{tag}.pyc"

    _, pyc = paths(first)
    assert pyc.is_file()  # compiled when the venv was built, as uv's --compile-bytecode would
    pyc.write_bytes(b"\0" * 16 + pyc.read_bytes()[16:])  # a header that matches no source: must not be trusted
    second = venvs.ensure("second", sys.executable, lock, root=tmp_path)
    other_source, other_pyc = paths(second)
    header = other_pyc.read_bytes()[:16]
    assert header != b"\0" * 16  # recompiled, through a new file: the sibling's link is not written into
    assert pyc.read_bytes()[:16] == b"\0" * 16
    pyc.unlink()
    third = venvs.ensure("third", sys.executable, lock, root=tmp_path)
    third_source, third_pyc = paths(third)
    if third_source.stat().st_ino == other_source.stat().st_ino:  # uv linked both to its cache: the .pyc is shared
        assert third_pyc.stat().st_ino == other_pyc.stat().st_ino
    assert third_pyc.read_bytes()[:16] == header
    assert subprocess.run([str(third.python), "-c", "import iniconfig"], check=False).returncode == 0


def test_a_new_clones_venv_links_the_bytecode_another_clones_venv_of_the_same_name_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another clone's folder of venvs, listed in the user's cache, donates its .pyc, even under the same cell name;
    folders gone since are dropped from the list."""
    monkeypatch.setenv("FANIN_VENV_ROOTS", str(tmp_path / "cache" / "venv-roots.txt"))
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0\n")
    gone = tmp_path / "gone"
    gone.mkdir()
    install_roots.remember(gone, install_roots.VENVS)
    gone.rmdir()
    venvs.ensure("elsewhere", sys.executable, lock, root=tmp_path / "chosen")
    assert install_roots.known(install_roots.VENVS) == []  # a folder the caller chose (a test's, a copy) is no clone's
    monkeypatch.setattr(venvs, "VENVS", tmp_path / "clone-a")
    first = venvs.ensure("cell-1.0", sys.executable, lock)
    assert install_roots.known(install_roots.VENVS) == [(tmp_path / "clone-a").resolve()]
    monkeypatch.setattr(venvs, "VENVS", tmp_path / "clone-b")
    second = venvs.ensure("cell-1.0", sys.executable, lock)
    assert install_roots.known(install_roots.VENVS) == [
        (tmp_path / "clone-a").resolve(),
        (tmp_path / "clone-b").resolve(),
    ]
    minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    tag = f"cpython-{sys.version_info[0]}{sys.version_info[1]}"
    sources = [
        v.path / "lib" / f"python{minor}" / "site-packages" / "iniconfig" / "__init__.py" for v in (first, second)
    ]
    pycs = [source.parent / "__pycache__" / f"__init__.{tag}.pyc" for source in sources]
    if sources[0].stat().st_ino != sources[1].stat().st_ino:
        pytest.skip("uv copied rather than linked from its cache here: no inode to share a .pyc through")
    assert pycs[0].stat().st_ino == pycs[1].stat().st_ino  # linked, not compiled again
    assert subprocess.run([str(second.python), "-c", "import iniconfig"], check=False).returncode == 0


def test_two_builders_of_one_venv_take_turns_and_the_second_builds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test run beside a matrix run (the CI command) may need the same cell's venv at the same moment."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.0.0\n")
    steps: list[str] = []
    run = venvs._run
    monkeypatch.setattr(venvs, "_run", lambda step, command: (steps.append(step), run(step, command))[1])
    both = threading.Barrier(2)

    def build(_: int) -> dict[str, str]:
        both.wait()  # the two ask at once: neither has found a finished venv yet
        return venvs.installed(venvs.ensure("cell", sys.executable, lock, root=tmp_path))

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(build, range(2))) == [{"iniconfig": "2.0.0"}] * 2
    assert steps.count("creating the venv") == 1, steps


def test_a_sync_runs_from_uvs_cache_and_online_only_when_the_cache_lacks_a_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls"
    fake = tmp_path / "uv"
    fake.write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\ncase " $* " in *" --offline "*) exit ${{OFFLINE_EXIT:-0}};; esac\n'
    )
    fake.chmod(0o755)
    lock = tmp_path / "lock.txt"
    lock.write_text("iniconfig==2.1.0\n")
    venvs._sync("installing", str(fake), ["--compile-bytecode"], Path("/py"), lock)
    assert calls.read_text().splitlines() == [f"pip sync --quiet --offline --compile-bytecode --python /py {lock}"]
    calls.unlink()
    monkeypatch.setenv("OFFLINE_EXIT", "1")  # the cache lacks a pin: offline fails, the same sync runs online
    venvs._sync("installing", str(fake), [], Path("/py"), lock)
    assert calls.read_text().splitlines() == [
        f"pip sync --quiet --offline --python /py {lock}",
        f"pip sync --quiet --python /py {lock}",
    ]
    calls.unlink()
    fake.write_text("#!/bin/sh\necho 'error: no such package' >&2\nexit 2\n")  # failing both ways: the error
    with pytest.raises(venvs.InstallError, match=r"installing failed \(exit 2\): error: no such package"):
        venvs._sync("installing", str(fake), [], Path("/py"), lock)


def test_a_new_home_still_finds_the_machines_pyenv_through_its_shims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run with a new empty HOME and no PYENV_ROOT (the fresh-machine check, `sudo -H`) finds the pyenv whose
    shims are on PATH: looking only in ~/.pyenv, every cell on another Python failed to find its interpreter."""
    from fanin.run import pythons

    pyenv = tmp_path / "pyenv"
    interpreter = pyenv / "versions" / "3.99.1" / "bin" / "python3.99"
    interpreter.parent.mkdir(parents=True)
    interpreter.write_text("#!/bin/sh\n")
    (pyenv / "shims").mkdir()
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "new-home"))
    monkeypatch.setenv("PATH", os.pathsep.join([str(pyenv / "shims"), "/usr/bin", "/bin"]))
    assert pythons.find.__wrapped__("3.99") == str(interpreter)
