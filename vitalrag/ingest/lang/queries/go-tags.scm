; Definitions and call references for Go (aider-style captures).

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(method_declaration
  name: (field_identifier) @name.definition.method) @definition.method

(type_spec
  name: (type_identifier) @name.definition.class
  type: (struct_type)) @definition.class

(type_spec
  name: (type_identifier) @name.definition.interface
  type: (interface_type)) @definition.interface

(interface_type
  (method_elem
    name: (field_identifier) @name.definition.method) @definition.method)

(call_expression
  function: (_) @name.reference.call) @reference.call
