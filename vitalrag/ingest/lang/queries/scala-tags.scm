; Definitions and call references for Scala (aider-style captures).
; A trait is an `interface`; an `object` a `class`, except a companion (an object
; named like a class or trait of its file), whose members the Scala rules give to
; that type. Test blocks (`test("...") {}`, `"..." in {}`, `"..." >> {}`) and the
; groups that name them (`describe("...") {}`, `"..." should {}`) are kept in
; test files only (see scala.py).

(class_definition
  name: (identifier) @name.definition.class) @definition.class

(object_definition
  name: (identifier) @name.definition.class) @definition.class

(package_object
  name: (identifier) @name.definition.class) @definition.class

(trait_definition
  name: (identifier) @name.definition.interface) @definition.interface

(enum_definition
  name: (identifier) @name.definition.enum) @definition.enum

(type_definition
  name: (type_identifier) @name.definition.class) @definition.class

(function_definition
  name: (identifier) @name.definition.function) @definition.function

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(call_expression
  function: (call_expression
    function: (identifier) @_test
    arguments: (arguments . (string) @name.definition.test))
  arguments: (block)
  (#match? @_test "^(test|it|they|property|scenario)$")) @definition.test

(call_expression
  function: (call_expression
    function: (identifier) @_group
    arguments: (arguments . (string) @name.definition.module))
  arguments: (block)
  (#match? @_group "^(describe|feature|context)$")) @definition.module

(infix_expression
  left: [(string) (infix_expression)] @name.definition.test
  operator: (_) @_in
  right: (block)
  (#match? @_in "^(in|>>|ignore)$")) @definition.test

(infix_expression
  left: (string) @name.definition.module
  operator: (_) @_group
  right: (block)
  (#match? @_group "^(should|when|must|can|which|-)$")) @definition.module

(call_expression
  function: [(identifier) (field_expression) (generic_function)] @name.reference.call) @reference.call

(instance_expression
  . [(type_identifier) (generic_type) (stable_type_identifier)] @name.reference.call) @reference.call
