; Definitions and call references for Rust (aider-style captures).
; @definition.module (inline `mod m { ... }`) and @definition.impl (`impl [Trait for] Type`)
; are scopes: they prefix qualified names but are no objects.

(struct_item
  name: (type_identifier) @name.definition.class) @definition.class

(union_item
  name: (type_identifier) @name.definition.class) @definition.class

(enum_item
  name: (type_identifier) @name.definition.enum) @definition.enum

(trait_item
  name: (type_identifier) @name.definition.interface) @definition.interface

(function_item
  name: (identifier) @name.definition.function) @definition.function

(trait_item
  body: (declaration_list
    (function_signature_item
      name: (identifier) @name.definition.method) @definition.method))

(mod_item
  name: (identifier) @name.definition.module
  body: (declaration_list)) @definition.module

(impl_item
  type: [
    (type_identifier) @name.definition.impl
    (generic_type type: (type_identifier) @name.definition.impl)
    (scoped_type_identifier name: (type_identifier) @name.definition.impl)
  ]) @definition.impl

(call_expression
  function: (_) @name.reference.call) @reference.call
