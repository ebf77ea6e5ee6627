"""Network logs (`logging`): security group logging objects, stored and shown."""
