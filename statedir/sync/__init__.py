"""Many machines, one store: `statedir sync` (`entry`: the remote, the lock, and the answer where
nothing moved; `unmoved`: the next such answer, from the record the last one left; `remote`: which
remote and branch; `exchange`: fetch, merge with the statedir merge driver, validate, verify, push) and the part of a merge git cannot do, numbering apart versions
registered on both sides (`versions`). Imports `statedir.history` and the layers below it."""
