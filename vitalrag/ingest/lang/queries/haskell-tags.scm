; Definitions and call references for Haskell (aider-style captures).
; A function's equations are one object (haskell.py); `data`, `newtype` and `type` are class
; objects, a type class an interface with its signatures as methods; an `instance` is a
; scope named `instance C T`. hspec/tasty blocks (`it "..." $ ...`) are tests in test files.

(function
  name: (variable) @name.definition.function) @definition.function

(bind
  name: (variable) @name.definition.function) @definition.function

(data_type
  name: (name) @name.definition.class) @definition.class

(newtype
  name: (name) @name.definition.class) @definition.class

(type_synonym
  name: (name) @name.definition.class) @definition.class

(class
  name: (name) @name.definition.interface) @definition.interface

(class_declarations
  (signature
    name: (variable) @name.definition.method) @definition.method)

(instance) @definition.module @name.definition.module

(infix
  left_operand: (apply
    function: (variable) @_group
    argument: (literal (string) @name.definition.module))
  operator: (operator) @_op
  (#eq? @_op "$")
  (#match? @_group "^(describe|context|testGroup)$")) @definition.module

(infix
  left_operand: (apply
    function: (variable) @_example
    argument: (literal (string) @name.definition.test))
  operator: (operator) @_op
  (#eq? @_op "$")
  (#match? @_example "^(it|specify|prop|testCase|testProperty|testSpec)$")) @definition.test

(apply
  function: (apply
    function: (variable) @_example
    argument: (literal (string) @name.definition.test))
  (#match? @_example "^(it|specify|prop|testCase|testProperty)$")) @definition.test

(apply
  function: [(variable) (qualified)] @name.reference.call) @reference.call
