"""The CI formats of ``margin check`` (SARIF, JUnit, GitHub) against their real schemas, for awkward file names.

The schemas are vendored in tests/schemas/ (README.md there gives source,
version and licence): SARIF 2.1.0 (OASIS, errata 01) and the Jenkins xUnit
plugin's junit-10.xsd.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote, unquote

import jsonschema
import pytest
import xmlschema

from scaling_core import CODES, Config, DocumentAnalysis, analyze_document
from server import reports
from server.sarif import DOCS_URL, FINGERPRINT_KEY, github_anchor
from tests.conftest import ROOT, margin

SCHEMAS = ROOT / "tests" / "schemas"
NAMES = ["a b.md", "100%.md", "#x.md", "a,b.md", "c:d.md", "ünï cødé.md", "new\nline.md"]

DRAFT = """# Draft

```calc
N = 70e9 param
D = 15e12 token
C = 6 * N * D -> FLOP
t = C / (8192 * h100.flops_bf16 * 0.4) -> days
```

Training takes about 12 days<!-- ≈ t -->.

The array is `2 * 8 * 128 * 8192 = 1.7e10` bytes, a 1000× slip.

<!-- margin: ignore C001 -->
Hidden: it takes about 40 days<!-- ≈ t -->.

Unknown: about 5 s<!-- ≈ nosuch -->.

```calc
q = foo + 1
q ≈ 3
```

**Question 1 [bad]:** What is 2 + 2?

Answer: `2 + 2 = 5`.

**Question 2 [none]:** Nothing to check here.

A slice of 8960 chips holds `8960 * 96 = 860TB` of HBM.
"""
PREFACE = "# Preface\n\nA paragraph pushed in above everything.\n\n"


def analyze(text: str = DRAFT, path: str = "draft.md") -> DocumentAnalysis:
    return analyze_document(text, path, Config())


@pytest.fixture
def nasty(tmp_path: Path) -> Path:
    for name in NAMES:
        (tmp_path / name).write_text(DRAFT, "utf-8")
    return tmp_path


# -- schema validation ---------------------------------------------------------------------------------------------
#: What this module writes: unreserved characters, "/" and upper-case percent escapes.
_ENCODED = re.compile(r"(?:[A-Za-z0-9\-._~/]|%[0-9A-F]{2})+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")
format_checker = jsonschema.FormatChecker()


@format_checker.checks("uri")
def _is_uri(value: object) -> bool:
    """RFC 3986 URI: a scheme, then only legal characters."""
    return isinstance(value, str) and bool(_SCHEME.match(value)) and bool(_URI_CHARS.fullmatch(value))


@format_checker.checks("uri-reference")
def _is_uri_reference(value: object) -> bool:
    """RFC 3986 URI-reference: a URI, or a relative reference whose first segment has no colon."""
    if not isinstance(value, str) or not _URI_CHARS.fullmatch(value):
        return False
    return _is_uri(value) or ":" not in value.split("/", 1)[0]


@pytest.fixture(scope="module")
def sarif_validators() -> list[jsonschema.protocols.Validator]:
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text("utf-8"))
    declared = jsonschema.validators.validator_for(schema)  # draft-04, as the OASIS file declares
    return [cls(schema, format_checker=format_checker) for cls in (jsonschema.Draft7Validator, declared)]


@pytest.fixture(scope="module")
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd")


def valid_sarif(text: str, validators: list) -> dict:
    log = json.loads(text)
    for validator in validators:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]
        assert not errors, errors[:5]
    return log


def test_validators_reject_what_the_schemas_forbid(sarif_validators: list, junit_schema: xmlschema.XMLSchema) -> None:
    log = json.loads(reports.to_sarif([analyze()], ["draft.md"]))
    where = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    for raw in ("a b.md", "100%.md", "ünï.md"):  # not URI references until percent-encoded
        where["uri"] = raw
        assert all(list(v.iter_errors(log)) for v in sarif_validators), raw
    where["uri"] = "draft.md"
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert all(list(v.iter_errors(log)) for v in sarif_validators)
    suite = '<testsuite name="x" tests="1" failures="0" errors="0"/>'
    assert junit_schema.is_valid(f"<testsuites>{suite}</testsuites>")
    for bad in (suite.replace('errors="0"', ""), suite.replace("/>", "><testcase/></testsuite>")):
        assert not junit_schema.is_valid(f"<testsuites>{bad}</testsuites>"), bad
    assert not junit_schema.is_valid(f'<testsuites skipped="0">{suite}</testsuites>')  # so totals carry no skipped


# -- SARIF ---------------------------------------------------------------------------------------------------------
def locations(log: dict) -> list[dict]:
    return [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in log["runs"][0]["results"]]


@pytest.mark.parametrize("name", NAMES)
def test_sarif_is_valid_and_uris_round_trip(name: str, tmp_path: Path, sarif_validators: list) -> None:
    log = valid_sarif(reports.to_sarif([analyze(path=name)], [name], root=str(tmp_path)), sarif_validators)
    run = log["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file://" + quote(str(tmp_path)) + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"
    for where in locations(log):
        assert where["uriBaseId"] == "%SRCROOT%"
        assert _ENCODED.fullmatch(where["uri"]), where["uri"]
        assert unquote(where["uri"]) == name


def test_sarif_through_the_cli(nasty: Path, sarif_validators: list) -> None:
    result = margin("check", "--format", "sarif", *NAMES, cwd=nasty)
    assert result.returncode == 1, result.stderr
    log = valid_sarif(result.stdout, sarif_validators)
    assert {unquote(where["uri"]) for where in locations(log)} == set(NAMES)
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file://" + quote(str(nasty.resolve())) + "/"


def test_files_outside_the_root_get_absolute_file_uris(tmp_path: Path, sarif_validators: list) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "out side#1.md").write_text(DRAFT, "utf-8")
    result = margin("check", "--format", "sarif", str(tmp_path / "out side#1.md"), cwd=tmp_path / "work")
    (where, *_) = locations(valid_sarif(result.stdout, sarif_validators))
    assert "uriBaseId" not in where
    assert where["uri"] == "file://" + quote(str(tmp_path.resolve())) + "/out%20side%231.md"
    log = json.loads(reports.to_sarif([analyze()], ["../up.md"], root="/home/me/book"))
    assert locations(log)[0] == {"uri": "file:///home/me/up.md"}
    log = json.loads(reports.to_sarif([analyze()], ["/home/me/book/ch 1.md"], root="/home/me/book"))
    assert locations(log)[0] == {"uri": "ch%201.md", "uriBaseId": "%SRCROOT%"}


def test_rules_link_to_their_documentation(sarif_validators: list) -> None:
    log = valid_sarif(reports.to_sarif([analyze()], ["draft.md"]), sarif_validators)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(CODES)
    headings = re.findall(r"^## (.+)$", (ROOT / "docs" / "diagnostics.md").read_text("utf-8"), re.M)
    anchors = {github_anchor(heading) for heading in headings}
    for rule in rules:
        base, anchor = rule["helpUri"].split("#")
        assert base == DOCS_URL and anchor in anchors and anchor.startswith(rule["id"].lower() + "--"), rule
    assert rules[list(CODES).index("C001")]["helpUri"].endswith("#c001--check-failed-error")
    assert {r["id"]: r["defaultConfiguration"]["level"] for r in rules}["N008"] == "note"
    for result in log["runs"][0]["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def result_for(log: dict, code: str, start_line: int) -> dict:
    results = log["runs"][0]["results"]
    where = [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results]
    (found,) = [r for r, key in zip(results, where) if key == (code, start_line)]
    return found


def test_notes_related_locations_and_fixes(sarif_validators: list) -> None:
    log = valid_sarif(reports.to_sarif([analyze()], ["draft.md"]), sarif_validators)
    slip = result_for(log, "C001", 12)
    assert slip["message"]["text"].endswith("\nnote: off by a factor of 1000 (a unit prefix slip?)")
    problem = result_for(log, "P001", 24)
    (related,) = problem["relatedLocations"]
    assert related["id"] == 1 and related["message"]["text"].startswith("'2 + 2' is 4, not = 5")
    assert related["physicalLocation"]["region"]["startLine"] == 26
    (fix,) = result_for(log, "C001", 10)["fixes"]
    assert fix["description"]["text"] == "Replace 12 days with 22 days"
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "draft.md", "uriBaseId": "%SRCROOT%"}
    (replacement,) = change["replacements"]
    region, text = replacement["deletedRegion"], replacement["insertedContent"]["text"]
    lines = DRAFT.split("\n")
    line = lines[region["startLine"] - 1]
    lines[region["startLine"] - 1] = line[: region["startColumn"] - 1] + text + line[region["endColumn"] - 1 :]
    assert lines[9] == "Training takes about 22 days<!-- ≈ t -->."
    assert [c.status for c in analyze("\n".join(lines)).checks][0] == "pass"


def fingerprints(text: str) -> dict[tuple[str, str], str]:
    log = json.loads(reports.to_sarif([analyze(text)], ["draft.md"]))
    found = {}
    for r in log["runs"][0]["results"]:
        key = (r["ruleId"], r["message"]["text"])
        assert key not in found
        found[key] = r["partialFingerprints"][FINGERPRINT_KEY]
    return found


def test_fingerprints_survive_edits_above_and_follow_the_finding() -> None:
    before = fingerprints(DRAFT)
    assert len(set(before.values())) == len(before) >= 8
    assert fingerprints(PREFACE + DRAFT) == before  # every line moved down by 4; no fingerprint moved
    changed = fingerprints(DRAFT.replace("about 12 days", "about 13 days"))
    (old,) = [k for k in before if k[1].startswith("check failed: computed 22.49 days, not ≈ 12 days")]
    (new,) = [k for k in changed if k[1].startswith("check failed: computed 22.49 days, not ≈ 13 days")]
    assert changed[new] != before[old]
    assert {k: v for k, v in changed.items() if k != new} == {k: v for k, v in before.items() if k != old}
    twice = json.loads(reports.to_sarif([analyze(DRAFT + "\nUnknown: about 5 s<!-- ≈ nosuch -->.\n")], ["draft.md"]))
    prints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in twice["runs"][0]["results"]
              if "nosuch" in r["message"]["text"]]  # fmt: skip
    assert len(prints) == 2 and prints[0] != prints[1]  # identical findings: told apart by their ordinal
    assert prints[0] == before[("N001", "unknown name 'nosuch'")]


# -- JUnit ---------------------------------------------------------------------------------------------------------
def junit(text: str, schema: xmlschema.XMLSchema) -> ET.Element:
    schema.validate(text)
    return ET.fromstring(text)


def cases(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name"): case for case in root.iter("testcase")}


def outcome(case: ET.Element) -> str:
    return next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "pass")


@pytest.mark.parametrize("name", NAMES)
def test_junit_is_valid_for_awkward_names(name: str, junit_schema: xmlschema.XMLSchema) -> None:
    root = junit(reports.to_junit([analyze(path=name)], [name]), junit_schema)
    (suite,) = root.iter("testsuite")
    assert suite.get("name") == suite.get("file") == name
    assert {case.get("classname") for case in suite.iter("testcase")} == {name}
    assert f"{name}:10:22: fail: computed 22.49 days" in cases(root)["claim ≈ 12 days"].find("system-out").text


def test_junit_through_the_cli(nasty: Path, junit_schema: xmlschema.XMLSchema) -> None:
    result = margin("check", "--format", "junit", *NAMES, cwd=nasty)
    root = junit(result.stdout, junit_schema)
    assert [suite.get("name") for suite in root.iter("testsuite")] == NAMES
    assert root.get("tests") == str(10 * len(NAMES)) and root.get("failures") == str(4 * len(NAMES))


def test_junit_outcomes_count_each_error_once(junit_schema: xmlschema.XMLSchema) -> None:
    root = junit(reports.to_junit([analyze()], ["draft.md"]), junit_schema)
    found = {name: outcome(case) for name, case in cases(root).items()}
    assert found == {
        "claim ≈ 12 days": "failure", "code 2 * 8 * 128 * 8192 = 1.7e10": "failure",
        "claim ≈ 40 days": "skipped",  # suppressed: a skip, never a failure
        "claim ≈ 5 s": "error",  # not evaluated: the error that stopped it
        "calc q ≈ 3": "error", "Question 1: code 2 + 2 = 5": "failure",
        "Question 2: code 8960 * 96 = 860TB": "pass",  # U005 is a warning
        "problem Question 1": "failure", "problem Question 2": "pass", "other errors": "error",
    }  # fmt: skip
    assert cases(root)["claim ≈ 5 s"].find("error").get("message") == "unknown name 'nosuch'"
    assert cases(root)["claim ≈ 40 days"].find("skipped").get("message").startswith("suppressed: computed 22.49 days")
    assert cases(root)["other errors"].find("error").get("message") == "1 error: N001 unknown name 'foo'"
    (suite,) = root.iter("testsuite")
    counts = {"tests": 10, "failures": 4, "errors": 3, "skipped": 1}
    assert {key: int(suite.get(key)) for key in counts} == counts
    totals = {key: counts[key] for key in ("tests", "failures", "errors")}  # the xsd has no skipped on <testsuites>
    assert {key: int(root.get(key)) for key in totals} == totals and root.get("skipped") is None
    reported = [element.text for element in root.iter() if element.tag in ("failure", "error")]
    for d in analyze().diagnostics:  # every error in exactly one failure or error; warnings in none
        expected = 1 if d.severity.label == "error" else 0
        assert sum(f"{d.severity.label} {d.code}: {d.message}" in text for text in reported) == expected, d
    clean = junit(reports.to_junit([analyze("```calc\nx = 2\nx ≈ 2\n```\n")], ["ok.md"]), junit_schema)
    assert (clean.get("failures"), clean.get("errors"), outcome(cases(clean)["other errors"])) == ("0", "0", "pass")


def test_untested_problems_and_suppressed_problem_failures_are_skipped(junit_schema: xmlschema.XMLSchema) -> None:
    text = "**Question 1 [x]:** Nothing.\n\n<!-- margin: ignore P001 -->\n**Question 2 [y]:** `2 + 2 = 5`.\n"
    root = junit(reports.to_junit([analyze(text)], ["p.md"]), junit_schema)
    found = {name: outcome(case) for name, case in cases(root).items()}
    assert found == {"Question 2: code 2 + 2 = 5": "failure", "problem Question 1": "skipped",
                     "problem Question 2": "skipped", "other errors": "pass"}  # fmt: skip


def test_junit_names_survive_edits_above_and_number_duplicates(junit_schema: xmlschema.XMLSchema) -> None:
    names = list(cases(junit(reports.to_junit([analyze()], ["draft.md"]), junit_schema)))
    moved = cases(junit(reports.to_junit([analyze(PREFACE + DRAFT)], ["draft.md"]), junit_schema))
    assert list(moved) == names
    assert moved["claim ≈ 12 days"].find("system-out").text.startswith("draft.md:14:22: fail")
    again = "Training takes about 12 days<!-- ≈ t -->.\n\nAgain 12 days<!-- ≈ t -->, again 12 days<!-- ≈ t -->.\n"
    doubled = DRAFT.replace("Training takes about 12 days<!-- ≈ t -->.\n", again)
    numbered = [n for n in cases(junit(reports.to_junit([analyze(doubled)], ["d.md"]), junit_schema)) if "12 days" in n]
    assert numbered == ["claim ≈ 12 days", "claim ≈ 12 days #2", "claim ≈ 12 days #3"]


def test_junit_times(junit_schema: xmlschema.XMLSchema) -> None:
    root = junit(reports.to_junit([analyze(), analyze()], ["a.md", "b.md"], times=[1.5, 0.25]), junit_schema)
    assert [s.get("time") for s in root.iter("testsuite")] == ["1.500", "0.250"] and root.get("time") == "1.750"
    assert junit(reports.to_junit([analyze()], ["a.md"]), junit_schema).get("time") == "0.000"


# -- GitHub workflow commands --------------------------------------------------------------------------------------
def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the Actions runner reads it (ActionCommand.TryParseV2)."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    name, _, props = line[2:end].partition(" ")
    properties = {}
    for pair in filter(None, props.split(",")):
        key, value = pair.split("=", 1)
        for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
            value = value.replace(escaped, raw)
        properties[key] = value
    data = line[end + 2 :]
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        data = data.replace(escaped, raw)
    return name, properties, data


def commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    lines = output.split("\n")
    assert lines[-1].startswith("margin: ") and all(line.startswith("::") for line in lines[:-1])
    return [parse_command(line) for line in lines[:-1]]


def test_github_escaping_is_exact() -> None:
    out = reports.to_github([analyze()], ["a,b:c%\r\nd.md"])
    head = "::error file=a%2Cb%3Ac%25%0D%0Ad.md,line=10,col=22,endLine=10,endColumn=29,title=Margin C001::"
    message = (
        "check failed: computed 22.49 days, not ≈ 12 days (tolerance -14 h/+24 h)%0Afix: Replace 12 days with 22 days"
    )
    assert out.startswith(head + message + "\n")


@pytest.mark.parametrize("name", NAMES)
def test_github_commands_parse_back(name: str) -> None:
    analysis = analyze(path=name)
    parsed = commands(reports.to_github([analysis], [name]))
    shown = [d for d in analysis.diagnostics if d.severity.label != "hint"]
    assert len(parsed) == len(shown) == 8
    for (level, props, message), d in zip(parsed, shown):
        assert level == {"error": "error", "warning": "warning"}[d.severity.label]
        assert props["file"] == name and props["title"] == f"Margin {d.code}"
        assert (int(props["line"]), int(props["col"])) == tuple(p + 1 for p in analysis.index.position(d.span.start))
        assert message.split("\n")[0] == d.message
    claim, slip, problem = parsed[0][2], parsed[1][2], parsed[5][2]
    verdict = "check failed: computed 22.49 days, not ≈ 12 days (tolerance -14 h/+24 h)"
    assert claim == verdict + "\nfix: Replace 12 days with 22 days"
    assert slip.endswith("\nnote: off by a factor of 1000 (a unit prefix slip?)")
    related = f"see {name}:26:10: '2 + 2' is 4, not = 5 (tolerance -0.5/+1)"
    assert problem == "Question 1 fails: 1 of 1 checks fail\n" + related


def test_github_through_the_cli(nasty: Path) -> None:
    result = margin("check", "--format", "github", *NAMES, cwd=nasty)
    assert result.returncode == 1
    files = [props["file"] for _, props, _ in commands(result.stdout.rstrip("\n"))]
    assert sorted(set(files)) == sorted(NAMES) and len(files) == 8 * len(NAMES)


def test_formats_load_lazily() -> None:
    heavy = ("server.sarif", "server.junit", "xml.sax", "jsonschema", "xmlschema")
    code = f"import sys, server.reports; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr


def test_the_summary_line_counts_one_as_one() -> None:
    from server.reports import Summary
    from server.text_report import summary_line

    checks = {"pass": 1, "fail": 0, "warn": 0, "skip": 0}
    problems = {"pass": 0, "fail": 0, "untested": 0}
    assert summary_line(Summary(1, checks, problems, 1, 1)).endswith("1 error, 1 warning")
    assert summary_line(Summary(2, checks, problems, 0, 2)).startswith("2 files:")
    assert summary_line(Summary(2, checks, problems, 0, 2)).endswith("0 errors, 2 warnings")
