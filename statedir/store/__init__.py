"""The store on disk: its layout and discovery, the lock, the journal, run logs, and the one write
path (`write.persist`). Imports `statedir.files` and `statedir.gitops` (and errors, faults), nothing above."""
