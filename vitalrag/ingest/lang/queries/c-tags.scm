; Definitions and call references for C (aider-style captures).
; A function definition's name is inside its declarator (pointers, parentheses):
; the C rules find it. A typedef of a struct, union or enum is one object with
; the typedef's name; its inner specifier is dropped then. Prototypes (no body)
; and object-like macros are no objects.

(function_definition
  declarator: (_) @name.definition.function) @definition.function

(preproc_function_def
  name: (identifier) @name.definition.function) @definition.function

(struct_specifier
  name: (type_identifier) @name.definition.class
  body: (field_declaration_list)) @definition.class

(union_specifier
  name: (type_identifier) @name.definition.class
  body: (field_declaration_list)) @definition.class

(enum_specifier
  name: (type_identifier) @name.definition.enum
  body: (enumerator_list)) @definition.enum

(type_definition
  declarator: (type_identifier) @name.definition.class) @definition.class

(call_expression
  function: (_) @name.reference.call) @reference.call
