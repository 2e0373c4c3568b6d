; Definitions and call references for Elixir (aider-style captures).
; Everything is a call: `defmodule X do`, `def f(a) do`. A module is a `class` object, a
; protocol an `interface`, an implementation the `class` Elixir names it (elixir.py);
; ExUnit's `describe` blocks are scopes, `test` blocks tests (in test files).

(call
  target: (identifier) @_kw
  (arguments . (alias) @name.definition.class)
  (#eq? @_kw "defmodule")) @definition.class

(call
  target: (identifier) @_kw
  (arguments . (alias) @name.definition.interface)
  (#eq? @_kw "defprotocol")) @definition.interface

(call
  target: (identifier) @_kw
  (arguments . (alias) @name.definition.class (keywords))
  (#eq? @_kw "defimpl")) @definition.class

(call
  target: (identifier) @_kw
  (arguments . [
    (call target: (identifier) @name.definition.function)
    (binary_operator left: (call target: (identifier) @name.definition.function) operator: "when")
    (identifier) @name.definition.function
  ])
  (#match? @_kw "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defn|defnp)$")) @definition.function

(call
  target: (identifier) @_kw
  (arguments . (string) @name.definition.module)
  (do_block)
  (#eq? @_kw "describe")) @definition.module

(call
  target: (identifier) @_kw
  (arguments . (string) @name.definition.test)
  (do_block)
  (#eq? @_kw "test")) @definition.test

(call
  target: (_) @name.reference.call) @reference.call
