"""What a pipeline template means beyond its shape: its compiled schemas, meaning checks,
stored versions, and the cross-file rules of a run."""
