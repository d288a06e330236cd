from statedir.cli import entry

entry()
