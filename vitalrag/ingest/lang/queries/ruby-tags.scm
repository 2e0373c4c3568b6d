; Definitions and call references for Ruby (aider-style captures).
; A module is a `class` object (a namespace and a mixin: the graph's type kind);
; `describe`/`context` blocks are scopes (@definition.module): they prefix the
; names of the examples inside but make no object. Example blocks (`it`, `test`)
; are kept as tests only in test files (see ruby.py).

(class
  name: [(constant) (scope_resolution)] @name.definition.class) @definition.class

(module
  name: [(constant) (scope_resolution)] @name.definition.class) @definition.class

(method
  name: (_) @name.definition.function) @definition.function

(singleton_method
  name: (_) @name.definition.function) @definition.function

(call
  method: (identifier) @_group
  arguments: (argument_list . [(string) (constant) (scope_resolution) (simple_symbol)] @name.definition.module)
  block: [(do_block) (block)]
  (#match? @_group "^(describe|context|feature|shared_examples|shared_examples_for|shared_context|experiment)$")) @definition.module

(call
  method: (identifier) @_example
  arguments: (argument_list . [(string) (simple_symbol)] @name.definition.test)
  block: [(do_block) (block)]
  (#match? @_example "^(it|specify|example|scenario|its|test|should)$")) @definition.test

(call
  method: (_)) @name.reference.call
