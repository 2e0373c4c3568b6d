; Definitions and call references for C++ (aider-style captures).
; As for C, plus classes, namespaces (scopes: they prefix qualified names, no
; object), `using X = ...` aliases, and `new T(...)` as a call of T.
; A method defined outside its class (`void Logger::flush() {}`) is named in
; its declarator: the C++ rules give it its owner.

(function_definition
  declarator: (_) @name.definition.function) @definition.function

(preproc_function_def
  name: (identifier) @name.definition.function) @definition.function

(class_specifier
  name: (_) @name.definition.class
  body: (field_declaration_list)) @definition.class

(struct_specifier
  name: (_) @name.definition.class
  body: (field_declaration_list)) @definition.class

(union_specifier
  name: (_) @name.definition.class
  body: (field_declaration_list)) @definition.class

(enum_specifier
  name: (_) @name.definition.enum
  body: (enumerator_list)) @definition.enum

(type_definition
  declarator: (type_identifier) @name.definition.class) @definition.class

(alias_declaration
  name: (type_identifier) @name.definition.class) @definition.class

(namespace_definition
  name: (_) @name.definition.module
  body: (declaration_list)) @definition.module

(call_expression
  function: (_) @name.reference.call) @reference.call

(new_expression
  type: (_) @name.reference.call) @reference.call
