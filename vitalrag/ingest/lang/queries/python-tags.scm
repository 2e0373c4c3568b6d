; Python tags for VitalRAG (aider-style capture names).
; Definitions: the whole node is captured as @definition.*, its name as @name.definition.*.
(class_definition
  name: (identifier) @name.definition.class) @definition.class

(function_definition
  name: (identifier) @name.definition.function) @definition.function

; Calls: the callee expression (identifier, attribute chain, or anything else).
(call
  function: (_) @name.reference.call) @reference.call

; Imports.
(import_statement) @reference.import
(import_from_statement) @reference.import

; `x = Foo(...)` and `self.x = Foo(...)`: simple local type inference.
(assignment
  left: (identifier) @assign.target
  right: (call function: (_) @assign.callee)) @assign

; `x = await f(...)`: an async function's return annotation is what the await gives.
(assignment
  left: (identifier) @assign.target
  right: (await (call function: (_) @assign.callee))) @assign

(assignment
  left: (attribute
    object: (identifier) @assign.attr.object
    attribute: (identifier) @assign.attr.name)
  right: (call function: (_) @assign.attr.callee)) @assign.attr

; Annotated parameters: `def f(s: Session)`.
(typed_parameter
  (identifier) @param.name
  type: (type) @param.type)
(typed_default_parameter
  name: (identifier) @param.name
  type: (type) @param.type)

; Every other name a scope binds (assignments, loops, with/except targets,
; parameters): a call through one of these is a dynamic receiver, not an
; unknown name.
(assignment left: (identifier) @variable)
(assignment left: (pattern_list (identifier) @variable))
(assignment left: (tuple_pattern (identifier) @variable))
(augmented_assignment left: (identifier) @variable)
(for_statement left: (identifier) @variable)
(for_statement left: (pattern_list (identifier) @variable))
(for_in_clause left: (identifier) @variable)
(as_pattern alias: (as_pattern_target (identifier) @variable))
(parameters (identifier) @variable)
(lambda_parameters (identifier) @variable)
(default_parameter name: (identifier) @variable)
(typed_parameter (identifier) @variable)
(list_splat_pattern (identifier) @variable)
(dictionary_splat_pattern (identifier) @variable)
(global_statement (identifier) @variable)

; Attributes set on self/cls anywhere in a class: `self.name = value`.
(assignment
  left: (attribute
    object: (identifier) @attribute.object
    attribute: (identifier) @attribute.name))
(augmented_assignment
  left: (attribute
    object: (identifier) @attribute.object
    attribute: (identifier) @attribute.name))

; `with Foo(...) as x`: x is Foo's __enter__ result (resolved only when that returns self).
(with_item
  value: (as_pattern
    (call function: (_) @with.callee)
    alias: (as_pattern_target (identifier) @with.target)))
