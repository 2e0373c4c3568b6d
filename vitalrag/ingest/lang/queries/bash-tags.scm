; Definitions and call references for Bash (aider-style captures).
; bats `@test "..." { }` blocks are no single node: bash.py makes them tests.

(function_definition
  name: (word) @name.definition.function) @definition.function

(command
  name: (command_name) @name.reference.call) @reference.call
