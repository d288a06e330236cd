"""Many machines, one store: the merge driver (`rules`, `logs`, `driver`), its registration
(`register`), `statedir sync` (`exchange`) and verify's check of merge commits (`merges`)."""
