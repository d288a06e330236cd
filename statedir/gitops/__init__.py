"""Git: processes, commits of exactly the store's files, the user's index held, libgit2, object
reads, the merge driver's registration. Imports `statedir.errors`, `statedir.fault_injection`, `statedir.files`."""
