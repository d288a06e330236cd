"""What people read: the Progress Dashboard, the stage graph drawn as Mermaid or DOT, a progress bar, the legal moves.
Imports the engine and the layers below it."""
