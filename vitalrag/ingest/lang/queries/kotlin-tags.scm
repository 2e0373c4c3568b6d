; Definitions and call references for Kotlin (aider-style captures).
; `interface` and `enum class` are class_declarations: the Kotlin rules set their kind.
; A companion object is not captured: its functions are members of the class around it.

(class_declaration
  name: (identifier) @name.definition.class) @definition.class

(object_declaration
  name: (identifier) @name.definition.class) @definition.class

(function_declaration
  name: (identifier) @name.definition.function) @definition.function

(type_alias
  type: (identifier) @name.definition.class) @definition.class

(call_expression
  . (_) @name.reference.call) @reference.call
