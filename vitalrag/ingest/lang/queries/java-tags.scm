; Java tags, aider style (@name.definition.*, @name.reference.*).
; vitalrag.ingest.java makes objects of the declarations captured @definition.*
; (outside anonymous classes; a test checks that the two agree); references are
; walked in the tree so that locals and scopes are known.

; ---- definitions -------------------------------------------------------

(class_declaration
  name: (identifier) @name.definition.class) @definition.class

(record_declaration
  name: (identifier) @name.definition.class) @definition.class

(interface_declaration
  name: (identifier) @name.definition.interface) @definition.interface

(annotation_type_declaration
  name: (identifier) @name.definition.interface) @definition.interface

(enum_declaration
  name: (identifier) @name.definition.enum) @definition.enum

(method_declaration
  name: (identifier) @name.definition.method) @definition.method

(annotation_type_element_declaration
  name: (identifier) @name.definition.method) @definition.method

(constructor_declaration
  name: (identifier) @name.definition.constructor) @definition.constructor

(compact_constructor_declaration
  name: (identifier) @name.definition.constructor) @definition.constructor

; ---- references --------------------------------------------------------

(method_invocation
  name: (identifier) @name.reference.call
  arguments: (argument_list)) @reference.call

(method_reference
  (identifier) @name.reference.call .) @reference.call

(object_creation_expression
  type: [
    (type_identifier) @name.reference.class
    (scoped_type_identifier) @name.reference.class
    (generic_type [(type_identifier) (scoped_type_identifier)] @name.reference.class)
  ]) @reference.class

(superclass
  [
    (type_identifier) @name.reference.class
    (scoped_type_identifier) @name.reference.class
    (generic_type [(type_identifier) (scoped_type_identifier)] @name.reference.class)
  ]) @reference.class

(type_list
  [
    (type_identifier) @name.reference.implementation
    (scoped_type_identifier) @name.reference.implementation
    (generic_type [(type_identifier) (scoped_type_identifier)] @name.reference.implementation)
  ]) @reference.implementation

(import_declaration
  [(identifier) (scoped_identifier)] @name.reference.import) @reference.import
