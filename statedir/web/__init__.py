"""`statedir serve`: a read-only web view of a store (the optional extra `statedir[web]`).
An entry point beside cli/ and mcp/: imports statedir.api and the layers below it only."""
