"""The pipeline engine: templates and their compiled schemas, pure transition rules, runs, the
stage graph, the transaction. Imports the store and the layers below it, never a subsystem."""
