"""Versions registered on both sides of a merge: each its own label (statedir.merge.versions)."""
from __future__ import annotations

from typing import Any

from statedir import request_ids
from statedir.files import yaml
from statedir.merge import versions
from statedir.store import layout

RUN = "runs/r1"


def _file(rel: str, data: dict[str, Any]) -> bytes:
    return yaml.dump(data, layout.schema_ref(rel)).encode()


def _passport(label: str, request_id: str, content: str, upstream: list[str] | None = None) -> tuple[str, bytes]:
    rel = f"{RUN}/materials/{label}.yaml"
    return rel, _file(rel, {
        "version_label": label, "series": label.rpartition("_v")[0], "materials": ["paper_draft"],
        "origin_skill": "s", "origin_mode": None, "origin_date": "2026-01-01T00:00:00Z",
        "verification_status": "UNVERIFIED", "content_hash": content * 64, "files": [],
        "integrity_pass_date": None, "upstream_dependencies": upstream or [], "repro_lock": None,
        "derived_from": None, "request_id": request_id})


def _state(counters: dict[str, int], current: dict[str, str]) -> tuple[str, bytes]:
    rel = f"{RUN}/state.yaml"
    return rel, _file(rel, {"run_id": "r1", "template": "academic-pipeline", "topic": "t", "current_stage": "1",
                            "version_counters": counters, "current_version": current,
                            "updated_at": "2026-01-01T00:00:00Z"})


def _side(*files: tuple[str, bytes]) -> dict[str, bytes]:
    return dict(files)


def _plain(raw: bytes) -> Any:
    return yaml.to_plain(yaml.load(raw, "x"))


def _merged(base: dict[str, bytes], ours: dict[str, bytes], theirs: dict[str, bytes]) -> dict[str, Any]:
    out = versions.merge(base, ours, theirs, None)
    back = versions.merge(base, theirs, ours, None)
    assert out is not None and back is not None
    assert all(o.clean for o in out.values()), [o.conflicts for o in out.values()]
    assert {rel: o.data for rel, o in out.items()} == {rel: o.data for rel, o in back.items()}  # either side ours
    return {rel: _plain(o.data) for rel, o in out.items()}


def test_the_later_of_two_versions_of_one_label_takes_the_next_free_label() -> None:
    zero, first, second, third = (request_ids.new() for _ in range(4))
    v1 = _passport("paper_draft_v1", zero, "0")
    stage = f"{RUN}/stages/1.yaml"
    base = _side(_state({"paper_draft": 1}, {"paper_draft": "paper_draft_v1"}), v1,
                 (stage, _file(stage, {"id": "1", "status": "in_progress", "outputs": []})))
    ours = _side(_state({"paper_draft": 2}, {"paper_draft": "paper_draft_v2"}), v1,
                 _passport("paper_draft_v2", second, "b"),
                 (stage, _file(stage, {"id": "1", "status": "in_progress", "outputs": ["paper_draft_v2 (from b)"]})))
    # theirs registered first, then a report on it that names it
    theirs = _side(_state({"paper_draft": 3}, {"paper_draft": "paper_draft_v3"}), v1, (stage, base[stage]),
                   _passport("paper_draft_v2", first, "a"), _passport("paper_draft_v3", third, "c", ["paper_draft_v2"]))
    merged = _merged(base, ours, theirs)
    labels = {rel.rpartition("/")[2]: (p["request_id"], p["content_hash"][0]) for rel, p in merged.items()
              if "/materials/" in rel}
    assert labels == {"paper_draft_v1.yaml": (zero, "0"),
                      "paper_draft_v2.yaml": (first, "a"), "paper_draft_v3.yaml": (third, "c"),
                      "paper_draft_v4.yaml": (second, "b")}
    assert merged[f"{RUN}/materials/paper_draft_v4.yaml"]["version_label"] == "paper_draft_v4"
    assert merged[f"{RUN}/materials/paper_draft_v3.yaml"]["upstream_dependencies"] == ["paper_draft_v2"]
    assert merged[stage]["outputs"] == ["paper_draft_v4 (from b)"]  # what names the moved version moves with it
    state = merged[f"{RUN}/state.yaml"]
    assert state["version_counters"] == {"paper_draft": 4}
    assert state["current_version"] == {"paper_draft": "paper_draft_v4"}


def test_a_version_an_earlier_merge_moved_keeps_its_new_label() -> None:
    """b pushed v2; a merged it as v3 (a's own v2 came first) and pushed; b meanwhile made v3:
    b's merge of a's keeps a's numbering and gives b's new version v4."""
    a, b, b2 = (request_ids.new() for _ in range(3))
    base = _side(_state({"paper_draft": 2}, {"paper_draft": "paper_draft_v2"}), _passport("paper_draft_v2", b, "b"))
    ours = _side(_state({"paper_draft": 3}, {"paper_draft": "paper_draft_v3"}), _passport("paper_draft_v2", b, "b"),
                 _passport("paper_draft_v3", b2, "x"))
    theirs = _side(_state({"paper_draft": 3}, {"paper_draft": "paper_draft_v3"}), _passport("paper_draft_v2", a, "a"),
                   _passport("paper_draft_v3", b, "b"))
    merged = _merged(base, ours, theirs)
    assert {rel.rpartition("/")[2]: p["request_id"] for rel, p in merged.items() if "/materials/" in rel} == {
        "paper_draft_v2.yaml": a, "paper_draft_v3.yaml": b, "paper_draft_v4.yaml": b2}
    assert merged[f"{RUN}/state.yaml"]["version_counters"] == {"paper_draft": 4}


def test_versions_that_claim_no_label_twice_merge_file_by_file() -> None:
    base = _side(_state({}, {}))
    state = _state({"paper_draft": 1}, {"paper_draft": "paper_draft_v1"})
    ours = _side(state, _passport("paper_draft_v1", request_ids.new(), "a"))
    assert versions.merge(base, ours, base, None) is None  # registered on one side only
    same = _passport("paper_draft_v1", request_ids.new(), "a")
    assert versions.merge(base, _side(state, same), _side(state, same), None) is None  # one registration
