"""The app's tests import it from this directory (pytest puts a rootdir conftest's directory on sys.path)."""
