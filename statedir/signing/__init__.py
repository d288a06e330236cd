"""Opt-in signed transitions: actors bound to SSH keys in the store's `signers.yaml`, their
commits signed by git (gpg.format=ssh), and verify's check of every bound actor's commit."""
