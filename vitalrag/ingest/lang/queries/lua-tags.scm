; Definitions and call references for Lua (aider-style captures).
; `function M.f()` and `function M:m()` are named `M.f` and `M.m` (lua.py sets the owner);
; busted's `describe` blocks are scopes (@definition.module), `it` blocks tests (in test files).

(function_declaration
  name: [(identifier) (dot_index_expression)] @name.definition.function) @definition.function

(function_declaration
  name: (method_index_expression) @name.definition.method) @definition.method

(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name.definition.function)
      (expression_list . value: (function_definition))) @definition.function))

(chunk
  (assignment_statement
    (variable_list . name: [(identifier) (dot_index_expression)] @name.definition.function)
    (expression_list . value: (function_definition))) @definition.function)

(function_call
  name: (identifier) @_group
  arguments: (arguments . (string) @name.definition.module (function_definition))
  (#match? @_group "^(describe|context|insulate|expose)$")) @definition.module

(function_call
  name: (identifier) @_example
  arguments: (arguments . (string) @name.definition.test (function_definition))
  (#match? @_example "^(it|test|spec)$")) @definition.test

(function_call
  name: (_) @name.reference.call) @reference.call
