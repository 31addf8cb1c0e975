"""Whose project a pasted paragraph is about (issue #26): an issue that names the vault's own
package is answered, one that imports a package no note holds gets nothing, whatever
plain words it shares with the vault (`ontopic.project`, `relevance.familiar`)."""

from __future__ import annotations

import pytest

from ocm.indexer import ontopic, relevance
from ocm.project import Project

from .test_ontopic import PLOTTING

# Another library's issue told in this vault's own words (colorbar, ticks, LogNorm, vmin,
# ValueError): only the package it imports, twice, says it is someone else's.
OTHER_PROJECT = (
    "Colorbar ticks are wrong on a LogNorm: update_ticks raises ValueError once vmin is "
    "zero, and the tick locations are not clipped first.\n"
    "```python\n"
    "import symcalc\n"
    "from symcalc.plotting import plot\n"
    "p = plot(x**2, norm='log', vmin=0)\n"
    "```\n"
    "Expected ticks at the powers of ten, as the colorbar shows them elsewhere.")
# This project's issue, mostly in words the notes do not hold (hexbin, mincnt, gridsize,
# reduce_C_function): one identifier (`PathCollection`) is on topic, and the package it
# imports is the vault's own (`lib/plotlib/...` in every note's files).
OWN_PROJECT = (
    "hexbin ignores mincnt when C is given: with gridsize=(7, 7) and reduce_C_function=np.sum "
    "every hexagon with a single sample disappears from the PathCollection although "
    "mincnt=1 asks to keep them.\n"
    "```python\n"
    "import plotlib.pyplot as plt\n"
    "plt.hexbin(X, Y, C=Z, mincnt=1, gridsize=(7, 7), reduce_C_function=np.sum)\n"
    "```\n"
"Without C the same call keeps those hexagons; the inconsistency surprised our users.")


@pytest.fixture
def plotting(project: Project) -> Project:
    for title, content, files in PLOTTING:
        project.remember(content, "bug_fix", title=title, files=files)
    return project


def test_an_issue_importing_a_package_the_vault_never_holds_gets_nothing(
        plotting: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(OTHER_PROJECT.split()) > 20
    assert plotting.search(OTHER_PROJECT) == []
    # Its words alone are on topic and familiar: the package it imports decided.
    monkeypatch.setattr(ontopic, "MIN_MENTIONS", 10**9)
    hits = plotting.search(OTHER_PROJECT)
    assert hits and hits[0].title == "Colorbar ticks on log norms"
    assert hits[0].whose is None and hits[0].familiar >= relevance.MIN_FAMILIAR


def test_an_issue_naming_the_vaults_own_package_is_answered(
        plotting: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(OWN_PROJECT.split()) > 20
    hits = plotting.search(OWN_PROJECT)
    assert hits and hits[0].whose == "own"
    # Naming the vault's own package answers it however unfamiliar its other words are;
    # the package under lib/ no longer found, familiarity decides again.
    monkeypatch.setattr(relevance, "MIN_FAMILIAR", hits[0].familiar + 1.0)
    assert [h.title for h in plotting.search(OWN_PROJECT)] == [h.title for h in hits]
    monkeypatch.setattr(ontopic, "CONTAINERS", ())
    assert plotting.search(OWN_PROJECT) == []


def test_a_paragraph_with_no_package_names_falls_back_on_familiarity(
        plotting: Project) -> None:
    issue = ("After upgrading, a colorbar on a LogNorm image shows no ticks at all and "
             "update_ticks raises ValueError once vmin is zero; the image itself draws "
             "fine with imshow and the same norm. Expected ticks at the powers of ten, "
             "as before the upgrade.")
    hits = plotting.search(issue)
    assert hits and hits[0].title == "Colorbar ticks on log norms"
    assert hits[0].whose is None and hits[0].familiar >= relevance.MIN_FAMILIAR


def test_the_standard_library_and_a_single_mention_name_no_other_project(
        plotting: Project) -> None:
    assert ontopic.imported("import os\nfrom collections.abc import Mapping\n"
                            "  File \"/usr/lib/python3.11/site-packages/numpy/core.py\"\n"
                            ">>> import symcalc as sc") == ["symcalc", "numpy"]
    once = OTHER_PROJECT.replace("import symcalc\n", "").replace("symcalc.plotting", "plots")
    stdlib = OTHER_PROJECT.replace("symcalc", "os")
    for issue in (once, stdlib):
        hits = plotting.search(issue)
        assert hits and hits[0].title == "Colorbar ticks on log norms"
        assert hits[0].whose is None


def test_an_empty_vault_and_a_one_note_vault(project: Project) -> None:
    assert project.search(OTHER_PROJECT) == []
    assert project.search(OWN_PROJECT) == []
    title, content, files = PLOTTING[2]  # the note holding `PathCollection`
    project.remember(content, "bug_fix", title=title, files=files)
    hits = project.search(OWN_PROJECT)
    assert [h.title for h in hits] == [title] and hits[0].whose == "own"
    other = OTHER_PROJECT.replace("Colorbar ticks are wrong", "Legend handles for scatter")
    assert project.search(other) == []


def test_with_meaning_off_a_paragraph_is_not_judged_by_its_project(
        plotting: Project, keyword_only: None) -> None:
    hits = plotting.search(OTHER_PROJECT)
    assert hits and hits[0].whose is None and hits[0].familiar is None


def test_explain_says_whose_project(plotting: Project) -> None:
    hits = plotting.search(OWN_PROJECT, explain=True)
    assert hits and hits[0].explain["whose"] == "own"
