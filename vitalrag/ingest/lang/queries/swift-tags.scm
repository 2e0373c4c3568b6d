; Definitions and call references for Swift (aider-style captures).
; `class`, `struct`, `actor`, `enum` and `extension` are all class_declarations:
; the Swift rules set their kind (an extension of a type its file declares is a
; scope that adds members to the type; elsewhere a class object of its own).
; A computed property (`var body: some View { ... }`) is a method; an `init` one named `init`.

(class_declaration
  name: (_) @name.definition.class) @definition.class

(protocol_declaration
  name: (type_identifier) @name.definition.interface) @definition.interface

(protocol_function_declaration
  name: (simple_identifier) @name.definition.function) @definition.function

(function_declaration
  name: (simple_identifier) @name.definition.function) @definition.function

(init_declaration
  "init" @name.definition.function) @definition.function

(property_declaration
  name: (pattern
    bound_identifier: (simple_identifier) @name.definition.function)
  computed_value: (computed_property)) @definition.function

(typealias_declaration
  name: (type_identifier) @name.definition.class) @definition.class

(call_expression
  . (_) @name.reference.call) @reference.call

(constructor_expression
  constructed_type: (_) @name.reference.call) @reference.call
