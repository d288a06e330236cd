"""History as a first-class part of statedir: the audit trail filtered, any moment of a run
read without a checkout, semantic diffs, versions, rollback, verify (replay) and doctor.

Everything here reads git's object store through one `git cat-file --batch` per command
(`objects.ObjectReader`) and writes only through the one write path (`persist()`).
"""
