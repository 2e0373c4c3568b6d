"""What a path says about its file: whether it holds tests."""

from __future__ import annotations

_TEST_FOLDERS = frozenset({"test", "tests", "testing"})
_TEST_SUFFIXES = ("_test.py", "_test.go", "test.java", "tests.java", ".test.js", ".test.ts", ".spec.js",
                  ".spec.ts")


def is_test_path(path: str) -> bool:
    """A path under a test folder, or a test file by name (``test_x.py``, ``XTest.java``)."""
    parts = path.replace("\\", "/").lower().split("/")
    name = parts[-1]
    return (any(p in _TEST_FOLDERS for p in parts[:-1]) or name.startswith("test_")
            or name == "conftest.py" or name.endswith(_TEST_SUFFIXES))
