; Definitions and call references for Zig (aider-style captures).
; `const Name = struct { ... }` (union, opaque) is a class, an enum or error set an enum;
; a `test "..."` block is a test.

(variable_declaration
  (identifier) @name.definition.class
  [(struct_declaration) (union_declaration) (opaque_declaration)]) @definition.class

(variable_declaration
  (identifier) @name.definition.enum
  [(enum_declaration) (error_set_declaration)]) @definition.enum

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(test_declaration
  [(string) (identifier)] @name.definition.test) @definition.test

(call_expression
  function: (_) @name.reference.call) @reference.call
