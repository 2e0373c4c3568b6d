; Definitions and call references for JavaScript (aider-style captures).
; @definition.module marks a scope that prefixes qualified names but is no object.

(class_declaration
  name: (identifier) @name.definition.class) @definition.class

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(generator_function_declaration
  name: (identifier) @name.definition.function) @definition.function

(class_body
  (method_definition
    name: [(property_identifier) (private_property_identifier)] @name.definition.method) @definition.method)

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
