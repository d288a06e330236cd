"""Sources and their deduplication, Evidence and its stance, Results and Claims (immutable)."""
from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from statedir import api
from statedir.errors import StatedirError
from statedir.files import yaml
from statedir.research import Ledger
from statedir.research.dedup import hint_key, normalize_url
from tests.support.research import commits, files
from tests.support.util import snapshot


@pytest.mark.parametrize(("url", "normal"), [
    ("https://Example.COM/Path/Doc/?utm_source=x&id=7#part", "example.com/Path/Doc?id=7"),
    ("http://example.com/a", "example.com/a"),
    ("example.com/a/", "example.com/a"),
    ("https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0111111&fbclid=z",
     "journals.plos.org/plosone/article?id=10.1371/journal.pone.0111111"),
    ("https://x.org/?gclid=1&ref=2", "x.org"),
])
def test_url_normalization(url: str, normal: str) -> None:
    assert normalize_url(url) == normal


def test_hint_key_ignores_case_punctuation_and_later_authors() -> None:
    assert hint_key("Offline-First UX!", "Ng T, Osei K", 2025) == hint_key("offline first ux", "NG T.", 2025)
    assert hint_key("Offline-First UX", "Ng T", 2025) != hint_key("Offline-First UX", "Ng T", 2024)


def test_doi_then_url_deduplicate_and_title_author_year_only_hints(ledger: Ledger, store: Path) -> None:
    first = ledger.create_source("Offline-First Mobile UX Patterns", authors="Ng T, Osei K", year=2025,
                                 doi="10.1000/xyz123", url="https://example.com/paper", created_by="bib")
    assert first["duplicate_hint"] is None and first["screening_status"] == "pending"
    assert first["project_id"] == "proj_default" and first["created_by"] == "bib"
    count = commits(store.parent)
    before = snapshot(store.parent)
    by_doi = ledger.create_source("Another title entirely", doi="10.1000/xyz123")
    by_url = ledger.create_source("Another title", url="HTTP://EXAMPLE.com/paper/?utm_campaign=x#top")
    for hit in (by_doi, by_url):
        assert hit["id"] == first["id"] and hit["title"] == first["title"]
        assert hit["duplicate_hint"] is None and hit["commit"] is None
    assert snapshot(store.parent) == before and commits(store.parent) == count
    similar = ledger.create_source("offline first mobile ux patterns", authors="Ng T.", year=2025,
                                   url="https://example.com/other")
    assert similar["id"] != first["id"] and similar["commit"] is not None
    assert similar["duplicate_hint"] == {"source_id": first["id"], "reason": "title+author+year match"}
    other_year = ledger.create_source("Offline-First Mobile UX Patterns", authors="Ng T", year=2024)
    assert other_year["duplicate_hint"] is None
    assert len(files(store, "sources")) == 3


def test_dedup_sees_sources_committed_on_another_branch_and_merged(ledger: Ledger, store: Path) -> None:
    import subprocess

    repo = store.parent
    ledger.create_source("Base", doi="10.5/base")  # the default project exists on both branches
    ledger.query(skill="x")  # the index exists and reflects HEAD
    subprocess.run(["git", "checkout", "-q", "-b", "other"], cwd=repo, check=True)
    theirs = ledger.create_source("Theirs", doi="10.5/theirs")
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    ledger.create_source("Ours", doi="10.5/ours")
    subprocess.run(["git", "merge", "-q", "--no-edit", "other"], cwd=repo, check=True)
    again = ledger.create_source("Theirs again", doi="10.5/theirs")
    assert again["id"] == theirs["id"] and again["commit"] is None


def test_the_default_project_made_on_two_branches_merges_as_one_made_at_the_earlier_time(
        sd: api.StateDir, ledger: Ledger, store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each branch's first source makes proj_default, in different seconds: git merges the two
    with the statedir driver (registered by init) into one project, created at the earlier time."""
    import subprocess

    from statedir.research import writes

    repo = store.parent
    for switch, branch, second in (("-c", "other", 0), ("", "main", 5)):
        subprocess.run(["git", "switch", "-q", *filter(None, [switch]), branch], cwd=repo, check=True)
        monkeypatch.setattr(writes, "now", lambda s=second: datetime.datetime(2026, 3, 1, 9, 0, s,
                                                                               tzinfo=datetime.timezone.utc))
        monkeypatch.setenv("GIT_AUTHOR_DATE", f"2026-03-01T09:00:0{second}Z")  # the commit's time is the record's
        ledger.create_source(f"On {branch}", doi=f"10.5/{branch}")
    merged = subprocess.run(["git", "merge", "--no-edit", "other"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    project = yaml.to_plain(yaml.load((store / "research/projects/proj_default.yaml").read_bytes(), "p.yaml"))
    assert project["created_at"] == "2026-03-01T09:00:00Z"
    assert ledger.validate()["clean"] and sd.validate()["valid"]
    assert sd.verify()["clean"]


def test_source_screening_and_evidence_tier(ledger: Ledger, store: Path) -> None:
    source = ledger.create_source("T", year=2020)
    excluded = ledger.set_source_screening(source["id"], "excluded", exclusion_reason="off topic")
    assert (excluded["screening_status"], excluded["exclusion_reason"]) == ("excluded", "off topic")
    graded = ledger.set_source_evidence_tier(source["id"], "Level III - Controlled Study")
    assert graded["evidence_tier"] == "Level III - Controlled Study" and graded["screening_status"] == "excluded"
    before = snapshot(store.parent)
    with pytest.raises(StatedirError) as refused:
        ledger.set_source_screening(source["id"], "maybe")
    assert refused.value.code == "INVALID_VALUE"
    with pytest.raises(StatedirError) as refused:
        ledger.set_source_screening("src_nope", "included")
    assert refused.value.code == "UNKNOWN_SOURCE"
    with pytest.raises(StatedirError) as refused:
        ledger.create_source("T", project_id="proj_nope")
    assert refused.value.code == "UNKNOWN_PROJECT"
    assert snapshot(store.parent) == before


@pytest.mark.parametrize("stance", ["supports", "refutes", "mixed"])
def test_evidence_links_a_source_to_a_question_with_a_stance(ledger: Ledger, stance: str) -> None:
    run = ledger.start_run("s", question_text="Q?")
    source = ledger.create_source("T")
    found = ledger.create_evidence(source["id"], run["question_id"], "Caching cut friction by 40%", stance,
                                   hypothesis_id=run["hypothesis_id"], limitations="small cohort",
                                   created_by="synthesis_agent")
    assert found["stance"] == stance and found["hypothesis_id"] == run["hypothesis_id"]
    assert ledger.query(source_id=source["id"])["evidence"][0]["id"] == found["id"]
    assert ledger.query(question_id=run["question_id"])["evidence"][0]["stance"] == stance


def test_evidence_refusals_change_nothing(ledger: Ledger, store: Path) -> None:
    run = ledger.start_run("s", question_text="Q?")
    source = ledger.create_source("T")
    before = snapshot(store.parent)
    for args, kwargs, code in [
        ((source["id"], run["question_id"], "S", "agrees"), {}, "INVALID_VALUE"),
        ((source["id"], run["question_id"], "", "supports"), {}, "INVALID_VALUE"),
        (("src_nope", run["question_id"], "S", "supports"), {}, "UNKNOWN_SOURCE"),
        ((source["id"], "q_nope", "S", "supports"), {}, "UNKNOWN_QUESTION"),
        ((source["id"], run["question_id"], "S", "supports"), {"hypothesis_id": "hyp_nope"}, "UNKNOWN_HYPOTHESIS"),
    ]:
        with pytest.raises(StatedirError) as refused:
            ledger.create_evidence(*args, **kwargs)
        assert refused.value.code == code
    assert snapshot(store.parent) == before


def test_results_and_claims_are_immutable_files_of_their_own(ledger: Ledger, store: Path) -> None:
    run = ledger.start_run("s", question_text="Q?")
    source = ledger.create_source("T")
    found = ledger.create_evidence(source["id"], run["question_id"], "S", "supports")
    result = ledger.record_result(run["id"], "Found 3 sources", artifact_role="bibliography",
                                  artifact_path="sources.bib")
    assert result["event"] == "result" and result["schema_version"] == 1
    assert result["artifact_ref"] == {"role": "bibliography", "path": "sources.bib"}
    claim = ledger.record_claim(run["id"], "Ship offline caching", confidence="high",
                                evidence_ref="notes.md#L3", evidence_id=found["id"])
    assert (claim["evidence_ref"], claim["evidence_id"], claim["confidence"]) == ("notes.md#L3", found["id"], "high")
    bare = ledger.record_claim(run["id"], "Another")
    assert (bare["confidence"], bare["evidence_ref"], bare["evidence_id"]) == (None, None, None)
    rows = ledger.query(run_id=run["id"])
    assert [r["id"] for r in rows["results"]] == [result["id"]]
    assert rows["results"][0]["artifact_role"] == "bibliography"
    assert {r["id"] for r in rows["claims"]} == {claim["id"], bare["id"]}
    assert files(store, "results") == [result["id"]] and len(files(store, "claims")) == 2
    before = snapshot(store.parent)
    for call, code in [(lambda: ledger.record_claim(run["id"], "C", evidence_id="evd_nope"), "UNKNOWN_EVIDENCE"),
                       (lambda: ledger.record_claim(run["id"], "C", confidence="certain"), "INVALID_VALUE"),
                       (lambda: ledger.record_result(run["id"], "S", artifact_role="bibliography"), "INVALID_VALUE"),
                       (lambda: ledger.record_claim("run_nope", "C"), "UNKNOWN_RUN")]:
        with pytest.raises(StatedirError) as refused:
            call()
        assert refused.value.code == code
    assert snapshot(store.parent) == before
