"""The upstream A2UI example surfaces (v0.8, v0.9, v0.9.1, v0.10) through our store, renderer and types.

Reads ../shared/upstream/a2ui/examples at test time (skipped when absent). Each
v0.9 and later example is ``{name, description, messages}``; each v0.8 example is a bare
list of messages. The v0.10 surfaces live apart (``v0_10/surfaces/``): their messages say
``"version": "v0.10"``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest
from agui_generated import a2ui_v08, a2ui_v09, a2ui_v09_1, a2ui_v10
from support import SHARED, shared_path

from agui.a2ui import SurfaceStore, render_surface

pytestmark = pytest.mark.upstream

EXAMPLES = ("upstream", "a2ui", "examples")
_ROOT = SHARED.joinpath(*EXAMPLES)
FILES = sorted(
    p.relative_to(_ROOT).as_posix() for p in _ROOT.glob("v0_*/catalogs/*/examples/*.json")
)
# an error, missing-reference, cycle or bad-shape placeholder: never expected in upstream examples
PLACEHOLDER = re.compile(r"<(missing|cycle|too deep|error|bad [a-z ]+|fn|render error):")


def messages_of(rel: str) -> list:
    data = json.loads(shared_path(*EXAMPLES, *rel.split("/")).read_text(encoding="utf-8"))
    return data if isinstance(data, list) else data["messages"]


def store_of(rel: str) -> SurfaceStore:
    store = SurfaceStore()
    for message in messages_of(rel):
        store.apply(message)
    return store


def only_surface(rel: str):
    store = store_of(rel)
    assert store.problems == []
    assert len(store.surfaces) == 1
    return next(iter(store.surfaces.values()))


def test_examples_are_present():
    shared_path(*EXAMPLES)
    assert len([f for f in FILES if f.startswith("v0_8/")]) >= 30
    assert len([f for f in FILES if f.startswith("v0_9/")]) >= 40
    assert len([f for f in FILES if f.startswith("v0_9_1/")]) >= 40
    assert len(V10_SURFACES) >= 40


@pytest.mark.parametrize("rel", FILES or ["(none)"])
def test_every_example_renders_without_problems(rel):
    if rel == "(none)":
        shared_path(*EXAMPLES)
        pytest.skip("no A2UI examples found")
    surface = only_surface(rel)
    assert surface.problems == []
    assert surface.version == ("v0.8" if rel.startswith("v0_8/") else "v0.9")
    lines = render_surface(surface)
    assert lines and any(line.strip() for line in lines)
    assert [line for line in lines if PLACEHOLDER.search(line)] == []
    assert render_surface(surface) == lines  # deterministic


@pytest.mark.parametrize("rel", FILES or ["(none)"])
def test_every_example_message_decodes_with_the_generated_types(rel):
    if rel == "(none)":
        shared_path(*EXAMPLES)
        pytest.skip("no A2UI examples found")
    module = {"v0_8": a2ui_v08, "v0_9": a2ui_v09, "v0_9_1": a2ui_v09_1}[rel.split("/")[0]]
    decoder = msgspec.json.Decoder(module.AgentMessage)
    for message in messages_of(rel):
        decoded = decoder.decode(json.dumps(message))
        present = [f for f in decoded.__struct_fields__ if getattr(decoded, f) is not msgspec.UNSET]
        assert len([f for f in present if f != "version"]) == 1


def test_v09_template_example_exact_lines():
    surface = only_surface("v0_9/catalogs/basic/examples/34_child-list-template.json")
    assert render_surface(surface) == [
        "  ### Dynamic Item List",
        "  - Apple - Qty: 10",
        "  - Banana - Qty: 5",
        "  - Cherry - Qty: 20",
    ]


def test_v08_task_card_example_exact_lines():
    surface = only_surface("v0_8/catalogs/basic/examples/07_task-card.json")
    assert surface.root == "root"
    assert render_surface(surface) == [
        "  ### Review pull request",
        "  Review and approve the authentication module changes.",
        "  Today Backend",
        "  :priority_high:",
    ]


def test_v09_software_purchase_example_exact_lines():
    surface = only_surface("v0_9/catalogs/basic/examples/19_software-purchase.json")
    assert render_surface(surface) == [
        "  ### Purchase License",
        "  ## Design Suite Pro",
        "  --------------------",
        "  Number of seats 10 seats",
        "  Billing period",
        "  (x) Annual",
        "  ( ) Monthly",
        "  --------------------",
        "  #### Total $1,188.00/year",
        "  [ Confirm Purchase ] [ Cancel ]",
    ]


def test_v09_modal_example_exact_lines():
    surface = only_surface("v0_9/catalogs/basic/examples/36_modal.json")
    assert render_surface(surface) == [
        "## Modal Component Sample",
        "[ Open Modal ]",
        "> This is the content inside the modal.",
    ]


def test_v08_login_form_example_exact_lines():
    surface = only_surface("v0_8/catalogs/minimal/examples/4_login_form.json")
    assert render_surface(surface) == ["## Login", "Username: []", "Password: []", "[* Sign In *]"]


def test_v09_incremental_example_builds_up_over_several_messages():
    rel = "v0_9/catalogs/minimal/examples/7_incremental.json"
    messages = messages_of(rel)
    store = SurfaceStore()
    seen = []
    for message in messages:
        store.apply(message)
        surface = next(iter(store.surfaces.values()))
        seen.append(len(render_surface(surface)))
    assert seen == sorted(seen) and seen[-1] > seen[0]


def test_examples_folder_layout_is_what_we_expect():
    root = shared_path(*EXAMPLES)
    assert isinstance(root, Path) and (root / "v0_9").is_dir() and (root / "v0_8").is_dir()


# -- v0.9.1 and v1.0 ------------------------------------------------------------------
# Upstream's v0.9.1 examples (v0_9_1/catalogs, "version": "v0.9" like v0.9's) are in FILES
# above; its v0.10 surfaces (v0_10/surfaces) render below. Besides, every v0.9 example is
# also run as v1.0 with only the version changed (also under v1.0's first name, v0.10), and
# as v1.0 in its inline form: the first updateComponents and a first whole-model
# updateDataModel folded into createSurface.
V09_FILES = [f for f in FILES if f.startswith("v0_9/")]
V10_SURFACES = sorted(
    p.relative_to(_ROOT).as_posix() for p in _ROOT.glob("v0_10/surfaces/*/*.json")
)


@pytest.mark.parametrize("rel", V10_SURFACES or ["(none)"])
def test_every_v10_example_surface_renders_and_decodes_with_the_v10_types(rel):
    if rel == "(none)":
        shared_path(*EXAMPLES)
        pytest.skip("no A2UI v0.10 example surfaces found")
    messages = messages_of(rel)
    assert {m["version"] for m in messages} == {"v0.10"}
    surface, lines = render_stream(messages)
    assert surface.version == "v1.0"
    assert lines and any(line.strip() for line in lines)
    assert [line for line in lines if PLACEHOLDER.search(line)] == []
    decoder = msgspec.json.Decoder(a2ui_v10.AgentMessage)
    for message in messages:
        decoder.decode(json.dumps(message))


def test_v10_modal_surface_exact_lines():
    _, lines = render_stream(messages_of("v0_10/surfaces/basic/36_modal.json"))
    assert lines == [
        "## Modal Component Sample",
        "[ Open Modal ]",
        "> This is the content inside the modal.",
    ]


def as_v10(messages: list, version: str = "v1.0") -> list:
    return [
        {**m, "version": version} if isinstance(m, dict) and "version" in m else m for m in messages
    ]


def as_v10_inline(messages: list) -> list:
    out = [json.loads(json.dumps(m)) for m in as_v10(messages)]
    create = next((m["createSurface"] for m in out if "createSurface" in m), None)
    if create is None:
        return out
    comps = next((m for m in out if "updateComponents" in m), None)
    if comps is not None:
        create["components"] = comps["updateComponents"]["components"]
        out.remove(comps)
    data = next((m for m in out if "updateDataModel" in m), None)
    body = data["updateDataModel"] if data else {}
    if data and body.get("path", "/") == "/" and isinstance(body.get("value"), dict):
        create["dataModel"] = body["value"]
        out.remove(data)
    return out


def render_stream(messages: list):
    store = SurfaceStore()
    for message in messages:
        store.apply(message)
    assert store.problems == []
    assert len(store.surfaces) == 1
    surface = next(iter(store.surfaces.values()))
    assert surface.problems == []
    return surface, render_surface(surface)


@pytest.mark.parametrize("rel", V09_FILES or ["(none)"])
def test_every_v09_example_renders_the_same_as_v091_and_as_v10_relabelled_and_inline(rel):
    if rel == "(none)":
        shared_path(*EXAMPLES)
        pytest.skip("no A2UI examples found")
    messages = messages_of(rel)
    _, expected = render_stream(messages)
    for version in ("v1.0", "v0.10"):
        surface, lines = render_stream(as_v10(messages, version))
        assert surface.version == "v1.0"
        assert lines == expected
    inline = as_v10_inline(messages)
    surface, lines = render_stream(inline)
    assert surface.version == "v1.0"
    assert lines == expected
    assert [line for line in lines if PLACEHOLDER.search(line)] == []


@pytest.mark.parametrize("rel", V09_FILES or ["(none)"])
def test_every_v09_example_decodes_with_the_v091_and_v10_generated_types(rel):
    if rel == "(none)":
        shared_path(*EXAMPLES)
        pytest.skip("no A2UI examples found")
    messages = messages_of(rel)
    for module, stream in (
        (a2ui_v09_1, messages),
        (a2ui_v10, as_v10(messages)),
        (a2ui_v10, as_v10_inline(messages)),
    ):
        decoder = msgspec.json.Decoder(module.AgentMessage)
        for message in stream:
            decoded = decoder.decode(json.dumps(message))
            present = [
                f for f in decoded.__struct_fields__ if getattr(decoded, f) is not msgspec.UNSET
            ]
            assert len([f for f in present if f != "version"]) == 1


def test_v10_inline_template_example_exact_lines():
    messages = as_v10_inline(
        messages_of("v0_9/catalogs/basic/examples/34_child-list-template.json")
    )
    assert [k for m in messages for k in m if k != "version"] == ["createSurface"]
    surface, lines = render_stream(messages)
    assert surface.catalog_id == messages[0]["createSurface"]["catalogId"]
    assert lines == [
        "  ### Dynamic Item List",
        "  - Apple - Qty: 10",
        "  - Banana - Qty: 5",
        "  - Cherry - Qty: 20",
    ]


def test_v10_inline_modal_example_exact_lines():
    messages = as_v10_inline(messages_of("v0_9/catalogs/basic/examples/36_modal.json"))
    assert render_stream(messages)[1] == [
        "## Modal Component Sample",
        "[ Open Modal ]",
        "> This is the content inside the modal.",
    ]


def test_v091_software_purchase_example_exact_lines():
    # v0.9.1 agents send v0.9's messages unchanged: the pinned v0.9 lines hold
    surface, lines = render_stream(
        messages_of("v0_9/catalogs/basic/examples/19_software-purchase.json")
    )
    assert surface.version == "v0.9"
    assert lines[:2] == ["  ### Purchase License", "  ## Design Suite Pro"]
    assert lines[-1] == "  [ Confirm Purchase ] [ Cancel ]"
