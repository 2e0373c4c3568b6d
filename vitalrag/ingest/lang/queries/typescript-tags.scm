; Definitions and call references for TypeScript and TSX (aider-style captures).
; @definition.module marks a scope (namespace) that prefixes qualified names but is no object.

(class_declaration
  name: (type_identifier) @name.definition.class) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name.definition.class) @definition.class

(interface_declaration
  name: (type_identifier) @name.definition.interface) @definition.interface

(enum_declaration
  name: (identifier) @name.definition.enum) @definition.enum

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(generator_function_declaration
  name: (identifier) @name.definition.function) @definition.function

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier)] @name.definition.method) @definition.method)

(abstract_method_signature
  name: (property_identifier) @name.definition.method) @definition.method

(interface_body
  (method_signature
    name: (property_identifier) @name.definition.method) @definition.method)

(internal_module
  name: (identifier) @name.definition.module) @definition.module

; const f = () => ...; const g = function () {...}  (top level only)
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name.definition.function
      value: [(arrow_function) (function_expression)]) @definition.function))

(program
  (variable_declaration
    (variable_declarator
      name: (identifier) @name.definition.function
      value: [(arrow_function) (function_expression)]) @definition.function))

(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name.definition.function
        value: [(arrow_function) (function_expression)]) @definition.function)))

(call_expression
  function: (_) @name.reference.call) @reference.call

(new_expression
  constructor: (_) @name.reference.call) @reference.call
