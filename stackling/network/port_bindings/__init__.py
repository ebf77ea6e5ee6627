"""Port bindings (`binding-extended`)."""
