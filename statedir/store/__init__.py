"""The store on disk: the opened store (`store.Store`: its configuration, the lock, crash recovery)
over its files (`disk.Disk`: safe paths, atomic writes), its layout and discovery, the journal, run
logs, a commit as history reads it back (`recorded.Commit`), and the one write path
(`write.persist`). Imports `statedir.files` and `statedir.gitops` (and errors, fault_injection), nothing above."""
