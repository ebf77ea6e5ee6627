"""The dataplane: makes the kernel match the database (stackling/dataplane/README.md)."""
