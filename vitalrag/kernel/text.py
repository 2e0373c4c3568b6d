"""Code-aware tokens: identifiers whole and split on snake_case and camelCase.

``code_tokens`` feeds BM25 (a list, repetitions kept, so term frequency counts);
``identifier_tokens`` is the set T(x) the allocator's companion gate and
query-centred windows compare. Both drop the reserved words of the languages we
index (a query saying "for", "class" or "using" has not named any code) and
English function words ("a", "the", "of").
"""

from __future__ import annotations

import functools
import hashlib
import re

_IDENT = re.compile(r"[^\W\d]\w*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W\d_]+")

_PYTHON = """False None True and as assert async await break class continue def del elif
else except finally for from global if import in is lambda nonlocal not or pass raise
return try while with yield self cls"""
_JAVA = """abstract assert boolean break byte case catch char class const continue default
do double else enum extends final finally float for goto if implements import instanceof
int interface long native new package private protected public return short static
strictfp super switch synchronized this throw throws transient try void volatile while
null true false"""
_JS_TS = """break case catch class const continue debugger default delete do else export
extends finally for function if import in instanceof new return super switch this throw
try typeof var void while with yield let static enum await implements package protected
interface private public null undefined true false async"""
_GO = """break case chan const continue default defer else fallthrough for func go goto if
import interface map package range return select struct switch type var nil"""
_RUST = """as break const continue crate else enum extern false fn for if impl in let loop
match mod move mut pub ref return self static struct super trait true type unsafe use
where while async await dyn"""
_CSHARP = """abstract as base bool break byte case catch char checked class const continue
decimal default delegate do double else enum event explicit extern false finally fixed
float for foreach goto if implicit in int interface internal is lock long namespace new
null object operator out override params private protected public readonly ref return
sbyte sealed short sizeof stackalloc static string struct switch this throw true try
typeof uint ulong unchecked unsafe ushort using virtual void volatile while"""
_C_CPP = """auto break case char const continue default do double else enum extern float
for goto if int long register return short signed sizeof static struct switch typedef
union unsigned void volatile while"""
#: Ruby's words that are syntax only ("module", "alias", "retry" name things too)
_RUBY = """def elsif end nil unless undef ensure rescue then defined"""
_LUA = """elseif end local nil then"""
_BASH = """elif esac fi"""
_ELIXIR = """defmodule defp defmacro defmacrop defstruct defprotocol defimpl fn"""
_ZIG = """pub comptime errdefer orelse usingnamespace anytype"""
_HASKELL = """deriving newtype qualified infixl infixr"""
_CPP = """alignas alignof char8_t char16_t char32_t co_await co_return co_yield consteval constexpr
constinit const_cast decltype dynamic_cast noexcept nullptr reinterpret_cast static_assert
static_cast thread_local typeid typename virtual wchar_t"""
_KOTLIN = """fun val var companion typealias vararg noinline crossinline reified tailrec lateinit"""
_SCALA = """def val var implicit sealed forSome"""
_SWIFT = """func let var guard inout fileprivate associatedtype deinit rethrows"""
_PHP = """elseif endif endfor endforeach endwhile endswitch foreach insteadof isset unset require_once
include_once"""

#: reserved words of Python, Java, JavaScript/TypeScript, Go, Rust, C#, C/C++ (casefolded)
KEYWORDS: frozenset[str] = frozenset(
    w.casefold() for block in (_PYTHON, _JAVA, _JS_TS, _GO, _RUST, _CSHARP, _C_CPP, _RUBY, _LUA, _BASH, _ELIXIR, _ZIG, _HASKELL, _CPP, _KOTLIN, _SCALA, _SWIFT, _PHP)
    for w in block.split()
)


#: English function words: in a natural-language query they name no code
STOPWORDS: frozenset[str] = frozenset("""a an the of to in on at by for from with without into onto
and or but not no is are was were be been being it its this that these those there here what which
who whom whose when where why how do does did done can could should would will shall may might must
i me my we our you your he she they them their than then so such very just also only""".split())


def identifiers(text: str) -> list[str]:
    """Every identifier-like word of ``text``, as written, in order."""
    return _IDENT.findall(text)


@functools.lru_cache(maxsize=1 << 16)
def identifier_parts(ident: str) -> tuple[str, ...]:
    """``parseHTTPResponse_v2`` -> the whole identifier and its parts, casefolded,
    keywords dropped, sorted."""
    parts = {ident.casefold()}
    for chunk in ident.split("_"):
        if chunk:
            parts.add(chunk.casefold())
            parts.update(p.casefold() for p in _CAMEL_PART.findall(chunk))
    return tuple(sorted(p for p in parts if p not in KEYWORDS))


def identifier_tokens(text: str) -> frozenset[str]:
    """T(x): the set of identifier-like tokens of ``text`` (English function words
    such as "a" and "the" are not identifiers a query shares with code)."""
    out: set[str] = set()
    for ident in set(_IDENT.findall(text)):
        out.update(p for p in identifier_parts(ident) if p not in STOPWORDS)
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 18)
def _bm25_parts(ident: str) -> tuple[str, ...]:
    return tuple(p for p in identifier_parts(ident) if len(p) > 1 and p not in STOPWORDS)


def code_tokens(text: str) -> list[str]:
    """Tokens for BM25: every identifier occurrence contributes its whole form
    and its parts (single letters and English function words dropped)."""
    out: list[str] = []
    extend = out.extend
    for ident in _IDENT.findall(text):
        extend(_bm25_parts(ident))
    return out


def code_token_ids(text: str, vocab: dict[str, int], memo: dict[str, tuple[int, ...]]) -> list[int]:
    """``code_tokens`` as ids in ``vocab`` (new tokens are added to it); ``memo``
    keeps each identifier's ids across calls."""
    out: list[int] = []
    extend = out.extend
    for ident in _IDENT.findall(text):
        ids = memo.get(ident)
        if ids is None:
            ids = memo[ident] = tuple(vocab.setdefault(t, len(vocab)) for t in _bm25_parts(ident))
        extend(ids)
    return out


def content_hash(text: str) -> str:
    """The id of a text's content (a file, a view): 24 hex digits of blake2b."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()
