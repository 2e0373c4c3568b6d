"""One rooted error tree for everything a user can cause.

    VitalRAGError
     +-- InputError              bad user input: a path, a value, an option
     |    +-- RepositoryNotFound
     |    +-- EmptyRepository
     +-- StoreError              anything about an index / graph store
     |    +-- StoreNotFound      no index where one was expected
     |    +-- StoreCorrupt       the index file cannot be read back
     |    +-- SchemaMismatch     the index was written by another schema version
     |    +-- StoreUnavailable   a server store cannot be reached
     |    +-- StoreAuthError     a server store refused the credentials
     |    +-- StoreBusy          another index run is writing the store
     +-- ObjectNotFound          an object id that is not in the store
     +-- EncodingFileError       the packaged tokenizer vocabulary is missing or not the official file

The CLI turns every ``VitalRAGError`` into one line on stderr and a non-zero
exit; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class VitalRAGError(Exception):
    """Root of every error VitalRAG raises on purpose."""


class InputError(VitalRAGError):
    """The user gave a value we cannot work with."""


class RepositoryNotFound(InputError):
    pass


class EmptyRepository(InputError):
    pass


class StoreError(VitalRAGError):
    pass


class StoreNotFound(StoreError):
    pass


class StoreCorrupt(StoreError):
    pass


class SchemaMismatch(StoreError):
    pass


class StoreUnavailable(StoreError):
    pass


class StoreAuthError(StoreError):
    pass


class StoreBusy(StoreError):
    pass


class ObjectNotFound(VitalRAGError):
    pass


class EncodingFileError(VitalRAGError):
    """The packaged vocabulary file is missing, unreadable or not the official one."""
