"""A plan reported done (ocm/vault/alike/plandone.py): seed 000's own example of auto-supersede,
and the ways it must not fire (advice not done, done on another file, another change done,
a change done to something else, another type, a negated, partial or conditional report)."""

from __future__ import annotations

import pytest

from ocm.indexer.likeness import Likeness
from ocm.project import Project
from ocm.vault.alike import plandone, supersede
from ocm.vault.folder import read_document
from ocm.vault.memories import MemoryNote

FILE = "src/lib/constants.ts"
PLAN = "constants.ts is 800 lines and should be split"


def status(project: Project, memory_id: str) -> str:
    return MemoryNote(read_document(project.vault.memory_path("gotcha", memory_id))).status


def done(old: str, new: str, old_files: list[str] | None = None,
         new_files: list[str] | None = None, meaning: plandone.Meaning | None = None) -> str:
    """What judge says the newer record did to the older one's plan ('' for nothing)."""
    decision = supersede.judge("", old, old_files or [FILE], "", new, new_files or [FILE],
                               meaning=meaning)
    return decision.done


def test_plans_and_reports_name_their_subject_and_action() -> None:
    [modal, size] = plandone.plans(PLAN, [FILE])
    assert (modal.family, modal.action, modal.about) == ("restructure", "split",
                                                         {"constant"})
    assert (size.family, size.action) == ("restructure", "800 lines")
    [todo] = plandone.plans("TODO: replace the Redux store in store.js with Zustand")
    assert (todo.family, todo.about) == ("replace", {"redux", "store"})
    [report] = plandone.reports("constants.ts was refactored into domain modules", [FILE])
    assert (report.family, report.about, report.objects) == ("restructure", {"constant"},
                                                             {"domain"})
    assert plandone.plans("Money math must use Decimal, not float") == []  # no change verb
    assert plandone.reports("15% coupons were off by one cent; the handler was called twice",
                            ) == []


@pytest.mark.parametrize("new, files", [
    ("constants.ts was refactored into domain modules", [FILE]),
    ("It has been split into domain modules under lib/constants/.", [FILE]),
    ("We have broken up constants.ts by domain.", [FILE]),
    ("constants.ts has since been split into domain modules", [FILE]),
])
def test_a_change_reported_done_answers_the_plan(new: str, files: list[str]) -> None:
    assert done(PLAN, new, new_files=files).startswith("'split")


@pytest.mark.parametrize("new", [
    "constants.ts is 800 lines; it should really be split soon",           # advice again
    "constants.ts was renamed to settings.ts",                             # another change
    "The currency helpers were extracted from constants.ts into money.ts",  # another subject
    "constants.ts was not split: too many importers",                      # negated
    "constants.ts has not been split yet",                                 # negated
    "constants.ts was partly split; the rest waits for the API freeze",     # partial
    "If constants.ts was split, every import would have to change",        # conditional
    "constants.ts was split once, is 900 lines again and should be split",  # still planned
])
def test_what_does_not_report_the_plan_done(new: str) -> None:
    assert done(PLAN, new, meaning=Likeness(None)) == ""


def test_a_subject_named_by_a_pronoun_is_told_apart_by_what_the_change_made() -> None:
    old = ("client.py repeats the same retry loop in every method; it should be extracted "
           "into a decorator")
    files = ["src/payments/client.py"]
    assert done(old, "client.py was split into two modules", files, files) == ""
    assert done(old, "The retry loop was extracted into a @retrying decorator", files, files)


def test_the_same_change_made_to_another_end_does_not_answer() -> None:
    old = "The Stripe client must be updated to API version 2024-06."
    files = ["src/payments/stripe_client.py"]
    assert plandone.answered(old, "The Stripe client was updated to retry on 429 responses.",
                             files) == ""
    assert plandone.answered(old, "The Stripe client was updated to API version 2024-06; "
                             "webhooks verified.", files)
    # a reason is not what the change made: "now that ..." does not disagree with "from"
    assert plandone.answered("The purge step should be dropped now that the CDN honours "
                             "cache tags.", "The purge step was deleted from "
                             "scripts/deploy.sh.", ["scripts/deploy.sh"])


def test_across_verb_families_meaning_decides() -> None:
    old = "app/settings.py reads os.environ by hand; it should move to pydantic-settings"
    new = "app/settings.py was migrated to a pydantic-settings BaseSettings class"
    files = ["app/settings.py"]
    asked: list[tuple[str, str]] = []

    def close(a: str, b: str) -> float:
        asked.append((a, b))
        return plandone.THRESHOLD_ACTION

    assert done(old, new, files, files, meaning=close).endswith(
        f"(meaning {plandone.THRESHOLD_ACTION:.2f})")
    assert ("move to pydantic-settings", "migrated to a pydantic-settings BaseSettings "
                                         "class") in asked
    assert done(old, new, files, files, meaning=lambda a, b: 0.62) == ""
    assert done(old, new, files, files, meaning=lambda a, b: None) == ""  # meaning off
    assert done(old, new, files, files) == ""


def test_through_remember_only_the_plan_done_on_its_own_file_and_type(
        project: Project) -> None:
    plan = project.remember(PLAN, "gotcha", files=[FILE])
    other_file = project.remember("config.ts was refactored into domain modules", "gotcha",
                                  files=["src/lib/config.ts"])
    other_type = project.remember("constants.ts was refactored into domain modules",
                                  "decision", files=[FILE])
    other_change = project.remember("constants.ts was renamed to settings.ts", "gotcha",
                                    files=[FILE])
    assert other_file.notice is None and other_type.notice is None
    assert other_change.notice is None and status(project, plan.id) == "active"
    report = project.remember("constants.ts was refactored into domain modules", "gotcha",
                              files=[FILE])
    assert report.notice == (
        f"superseded {plan.id} (auto: similarity 0.40, same file, plan reported done: "
        "'split' done: 'refactored into domain modules')")
    assert status(project, plan.id) == "superseded"


def test_candidates_from_the_index_reach_the_plan(project: Project,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import ocm.project

    monkeypatch.setattr(ocm.project, "SUPERSEDE_SCAN_MAX", 5)
    plan = project.remember(PLAN, "gotcha", files=[FILE])
    for i in range(12):
        project.remember(f"Unrelated gotcha {i}: CSS grid gaps collapse in Safari 15",
                         "gotcha", files=[f"web/styles/grid{i}.css"], auto_supersede=False)
    report = project.remember("constants.ts was refactored into domain modules", "gotcha",
                              files=[FILE])
    assert report.notice is not None and plan.id in report.notice
    assert status(project, plan.id) == "superseded"


def test_ocm_supersede_finds_a_plan_reported_done_among_stored_records(
        project: Project) -> None:
    plan = project.remember(PLAN, "gotcha", files=[FILE], auto_supersede=False)
    report = project.remember("constants.ts was refactored into domain modules", "gotcha",
                              files=[FILE], auto_supersede=False)
    [row] = project.supersede_scan(dry_run=True)
    assert (row["old_id"], row["new_id"]) == (plan.id, report.id)
    assert "plan reported done: 'split' done:" in row["reason"]
