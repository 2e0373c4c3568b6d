; Definitions and call references for PHP (aider-style captures).
; A trait is a `class` (a mixin with code). A namespace names no object: it is
; the file's package (see php.py). Pest's `test('...', fn)` and `it('...', fn)`
; are tests in test files only.

(class_declaration
  name: (name) @name.definition.class) @definition.class

(interface_declaration
  name: (name) @name.definition.interface) @definition.interface

(trait_declaration
  name: (name) @name.definition.class) @definition.class

(enum_declaration
  name: (name) @name.definition.enum) @definition.enum

(function_definition
  name: (name) @name.definition.function) @definition.function

(method_declaration
  name: (name) @name.definition.function) @definition.function

(function_call_expression
  function: (name) @_test
  arguments: (arguments . (argument [(string) (encapsed_string)] @name.definition.test))
  (#match? @_test "^(test|it)$")) @definition.test

(function_call_expression
  function: (_) @name.reference.call) @reference.call

(member_call_expression
  name: (_)) @name.reference.call

(nullsafe_member_call_expression
  name: (_)) @name.reference.call

(scoped_call_expression
  name: (_)) @name.reference.call

(object_creation_expression
  [(name) (qualified_name)] @name.reference.call) @reference.call
