"""ocm/indexer/whooshlean.py: Whoosh's word variations and foreign stemmers deferred in a
one-shot search, answering as Whoosh's own modules do. Each case runs in a new interpreter
(the deferral only applies before Whoosh loads)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

WORDS = ["running", "rendered", "databases", "migrations", "happily", "generously", "flies"]


def _python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


PROBE = f"""
import json, sys
{{install}}
import whoosh.query
from whoosh.lang import stemmer_for_language
from whoosh.lang.snowball import classes
words = {WORDS!r}
before = {{
    "morph_ran": "_ocm_ran" in vars(sys.modules["whoosh.lang.morph_en"]),
    "snowball": sorted(m for m in sys.modules if m.startswith("whoosh.lang.snowball.")),
}}
stems = {{lang: [stemmer_for_language(lang)(w) for w in words] for lang in ("en", "nl", "ru")}}
from whoosh.lang.snowball import DutchStemmer, EnglishStemmer
from whoosh.query.terms import variations as held  # what Variations calls
variations = {{w: sorted(held(w)) for w in words}}
from whoosh.lang.morph_en import variations as direct
print(json.dumps({{"before": before, "stems": stems, "classes": sorted(classes),
                  "dutch": DutchStemmer().stem("lopen"), "english": EnglishStemmer().stem("ran"),
                  "variations": variations,
                  "direct": {{w: sorted(direct(w)) for w in words}}}}))
"""


@pytest.fixture(scope="module")
def plain() -> dict:
    return _python(PROBE.replace("{install}", ""))


def test_nothing_runs_until_asked(plain: dict) -> None:
    lean = _python(PROBE.replace("{install}",
        "from ocm.indexer import whooshlean\nwhooshlean.install()"))
    assert lean["before"] == {"morph_ran": False, "snowball": []}
    assert plain["before"]["snowball"][:3] == [
        "whoosh.lang.snowball.bases", "whoosh.lang.snowball.danish",
        "whoosh.lang.snowball.dutch"]
    # Once asked, the same answers as Whoosh's own modules.
    for key in ("stems", "classes", "dutch", "english", "variations", "direct"):
        assert lean[key] == plain[key], key
    assert len(plain["classes"]) == 14
    assert "renders" in plain["variations"]["rendered"]
    assert plain["stems"]["en"][0] == "run" and plain["stems"]["nl"] != plain["stems"]["en"]


def test_after_whoosh_has_loaded_it_changes_nothing() -> None:
    found = _python("""
import json, sys
import whoosh.query
from whoosh.lang import stemmer_for_language
stemmer_for_language("en")
morph, snowball = sys.modules["whoosh.lang.morph_en"], sys.modules["whoosh.lang.snowball"]
from ocm.indexer import whooshlean
whooshlean.install()
print(json.dumps([sys.modules["whoosh.lang.morph_en"] is morph,
                  sys.modules["whoosh.lang.snowball"] is snowball,
                  type(snowball.classes).__name__]))
""")
    assert found == [True, True, "dict"]


def test_a_name_the_package_does_not_have_is_an_attribute_error() -> None:
    found = _python("""
import json
from ocm.indexer import whooshlean
whooshlean.install()
import whoosh.lang.snowball as snowball, whoosh.lang.morph_en as morph
out = []
for module, name in ((snowball, "KlingonStemmer"), (morph, "nothing_here")):
    try:
        getattr(module, name)
        out.append("found")
    except AttributeError:
        out.append("AttributeError")
print(json.dumps(out))
""")
    assert found == ["AttributeError", "AttributeError"]
