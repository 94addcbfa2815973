"""kb.match.lines: the pages a pasted line names by itself, as the search box puts them first."""

from __future__ import annotations

import functools
import io
import re

import pytest

from kb import messages as message_index
from kb.entries import load_all
from kb.match.explain import MATCH, explain
from kb.match.rules import NCNN_LAYER_NAMES
from kb.match.lines import Table, portable
from kb.paths import repo_root

ENTRIES = load_all(repo_root())
MESSAGES = message_index.load_all(entries=ENTRIES)
LINES = sorted({s.example for e in ENTRIES for s in e.meta.signatures if s.kind == "log" and s.example}
               | {m.example for m in MESSAGES.values()})


@functools.cache
def table() -> Table:
    """Built when a test needs it, not when the module is collected (4 s: every xdist worker collects it)."""
    return Table.build(ENTRIES, MESSAGES)


def test_a_line_names_the_page_kb_explain_names():
    """Where explain matches an entry on a line, that entry comes first; where it only finds it possible,
    the message page does (or nothing, if the line is in no message)."""
    wrong = []
    for line in LINES:
        ranked, _ = explain("line", io.BytesIO(f"{line}\n".encode()), ENTRIES, MESSAGES)
        matched = [f"{x.entry.slug}/" for x in ranked if x.confidence == MATCH]
        pages = table().pages(line)
        ok = bool(pages) and pages[0] in matched if matched else not pages or pages[0].startswith("messages/")
        if not ok:
            wrong.append((line, matched[:2], pages[:2]))
    assert len(LINES) > 50 and not wrong


@pytest.mark.parametrize("log", ["Cast not supported yet!", "Shape not supported yet!\nCast not supported yet!"])
def test_evidence_read_from_the_whole_log_names_the_page_kb_explain_names(log):
    """KB072 takes `Cast not supported yet!` only in a log without `Shape not supported yet` (a regex anchored at
    the log's start): the box reads it as explain does."""
    ranked, _ = explain("log", io.BytesIO(f"{log}\n".encode()), ENTRIES, MESSAGES)
    matched = [f"{x.entry.slug}/" for x in ranked if x.confidence == MATCH]
    pages = table().pages(log)
    assert pages and (pages[0] in matched if matched else pages[0].startswith("messages/")), (matched, pages)


def test_every_message_line_finds_its_page():
    missing = [m.id for m in MESSAGES.values() if f"messages/{m.id}/" not in table().pages(m.example)]
    assert not missing


def test_a_generic_line_is_its_message_page_until_other_words_name_a_cause():
    cases = [(page, c) for page, causes in table().causes.items() for c in causes]
    assert cases
    page, cause = cases[0]
    line = MESSAGES[page.split("/")[1]].example
    word = cause.source.replace("(?<![A-Za-z0-9_])", "").replace("(?![A-Za-z0-9_])", "").replace("\\", "")
    assert cause.page not in table().pages(line)[:1]
    with_word = table().pages(f"{line} {word}")
    assert with_word.index(cause.page) < with_word.index(page)


def test_messages_come_in_the_order_the_log_shows_them():
    """The first error of a log is its cause, those after it its consequences (alibaba/MNN#2649: a Reshape error,
    then Compute Shape Error): a longer message later in the paste does not go first."""
    first, later = MESSAGES["mnn-reshape-error"], MESSAGES["mnn-compute-shape-error"]
    weight = {r.page: r.weight for r in table().rules}
    assert weight[f"messages/{later.id}/"] > weight[f"messages/{first.id}/"]  # weight alone: the wrong order
    for text in (f"{first.example}\n{later.example}", f"{first.example} {later.example}"):
        pages = [p for p in table().pages(text) if p.startswith("messages/")]
        assert pages[:2] == [f"messages/{first.id}/", f"messages/{later.id}/"]
    pages = [p for p in table().pages(f"{later.example}\n{first.example}") if p.startswith("messages/")]
    assert pages[:2] == [f"messages/{later.id}/", f"messages/{first.id}/"]


def test_a_secondary_message_comes_after_the_others_wherever_it_stands():
    """Android's log showed "network graph not ready" above "param is too old" (Tencent/ncnn#5906): the
    first is what every failed load prints, the second says why."""
    late = [m for m in MESSAGES.values() if m.secondary]
    assert {"segmentation-fault", "ncnn-network-graph-not-ready", "mnn-load-cache-file-error"} <= {m.id for m in late}
    cause = MESSAGES["ncnn-param-too-old"]
    for m in late:
        pages = [p for p in table().pages(f"{m.example}\n{cause.example}") if p.startswith("messages/")]
        assert pages[:2] == [f"messages/{cause.id}/", f"messages/{m.id}/"]
    alone = table().pages(MESSAGES["ncnn-network-graph-not-ready"].example)
    assert alone[:1] == ["messages/ncnn-network-graph-not-ready/"]


def test_a_word_many_pages_say_names_no_cause_of_a_generic_line():
    """alibaba/MNN#2698: a model MNN quantized, 量化模型 (a quantized model) beside the line; Tencent/ncnn#5626: ncnn's
    Vulkan banner (int8-p/s/u/a=1/1/1/1) above it. Each word is a synonym of one cause, but many pages say it."""
    for line, page in (("Create execution error : 101 Can't run session because not resized 相同推理代码量化模型推理报错",
                        "messages/mnn-create-execution-error/"),
                       ("[0 NVIDIA RTX A5000]  fp16-p/s/u/a=1/1/1/1  int8-p/s/u/a=1/1/1/1\n"
                        "layer Resize not exists or registered", "messages/ncnn-layer-not-registered/")):
        assert table().pages(line)[0] == page
    said = {c.source.replace("(?<![A-Za-z0-9_])", "").replace("(?![A-Za-z0-9_])", "")
            for causes in table().causes.values() for c in causes}
    assert said and not said & {"量化模型", "int8"}


@pytest.mark.parametrize("layer", sorted(NCNN_LAYER_NAMES))
def test_a_native_ncnn_layer_name_is_no_entrys_evidence(layer):
    pages = table().pages(f"layer {layer} not exists or registered")
    assert pages and not [p for p in pages if not p.startswith("messages/")]


def test_a_line_another_entry_claims_is_not_this_entrys_evidence():
    """explain's op claims: a signature naming its op literally ('layer Tensor.to not exists or registered')
    takes the line from wider evidence (an entry whose evidence reads any torch-named layer)."""
    literal = [c for c in table().claims if not re.search(r"[()\[\]|?*+]", c.source)]
    assert literal
    for c in literal:
        line = c.source.replace("\\", "")
        claimers = {o.page for o in table().claims if o.regex.search(line)}
        named = {p for p in table().pages(line) if not p.startswith("messages/")}
        assert named <= claimers, (line, named - claimers)


@pytest.mark.parametrize("pattern,want", [
    (r"(?s)a.*b", ("a.*b", "is")),
    (r"(?m)^todo TopK\b", (r"^todo TopK\b", "im")),
    (r"x (?i:while) y", (r"x (?:while) y", "i")),
    (r"\A(?![\s\S]*Shape)(?=[\s\S]*Cast)", (r"^(?![\s\S]*Shape)(?=[\s\S]*Cast)", "i")),  # ^ is \A in both
    (r"(?m)\Ax", None),  # with multiline, ^ is not the text's start
    (r"These Op Not Support: ONNX::(?P<custom_op>\w+)", None),  # needs ONNX's op list: left to kb explain
    (r"(?x) a b", None),
])
def test_only_regexes_both_languages_read_alike_are_written_out(pattern, want):
    assert portable(pattern) == want


def test_a_multi_line_paste_is_cut_to_its_known_lines_else_its_errors():
    """ncnn follows a wrong blob name with hint lines ('Try', 'ex.input("in0", in0);') whose words no page has."""
    find_blob = next(m for m in MESSAGES.values() if m.example.startswith("find_blob_index_by_name"))
    paste = f"{find_blob.example}\nTry\n    ex.input(\"in0\", in0);\n"
    assert table().reduce(paste) == [find_blob.example]
    assert table().reduce("model loaded\r\n  Something failed badly  \r\nbye\n") == ["Something failed badly"]
    assert table().reduce("hello\n\nworld") == ["hello", "world"]  # nothing known, nothing error-like: all of it


def test_an_issue_reference_names_the_pages_citing_it_first():
    """Every upstream reference of every entry and message, as people write it (alibaba/MNN#3977, MNN#3977, the
    thread's address, and #3977 where one tracker's number is cited), names first a page whose data lists it; a
    number that only continues a list of one tracker's references (ncnn#4803, #4752) names that page too."""
    listed = [(u.ref, f"{e.slug}/") for e in ENTRIES for u in e.meta.upstream]
    listed += [(c.ref, f"messages/{m.id}/") for m in MESSAGES.values() for c in m.causes]
    owners = {}
    for ref, page in listed:
        owners.setdefault(ref, set()).add(page)
    numbers = {}
    for ref in owners:
        numbers.setdefault(ref.split("#")[1], set()).add(ref.split("#")[0].split("/")[1].lower())
    wrong = []
    for ref, pages in owners.items():
        repo, num = ref.split("#")
        forms = [ref, f"{repo.split('/')[1]}#{num}", f"https://github.com/{repo}/issues/{num} same here"]
        forms += [f"#{num}"] if len(numbers[num]) == 1 else []
        wrong += [(form, got[:2]) for form in forms if not (got := table().pages(form)) or got[0] not in pages]
    assert len(owners) > 300 and not wrong, wrong[:5]
    assert table().pages("Tencent/ncnn#4803, #4752 and #3297 look alike")  # every number of the list is cited


def test_a_bare_number_continues_a_list_only():
    from kb.match.lines import cited

    assert cited("Tencent/ncnn#4803, #4752 and #3297") == ["ncnn#4803", "ncnn#4752", "ncnn#3297"]
    assert cited("alibaba/MNN#615 (ADMM on 3.0.0), #4374") == ["mnn#615"]  # words between: no tracker known
    assert cited("see #12 and KB034") == []


def test_a_bare_number_in_a_paste_is_no_issue():
    """'#1 0x7f... in ncnn::Net::load_param' is a backtrace's frame: only a whole query of '#N' is a bare reference."""
    from kb.match.lines import issue_keys

    assert issue_keys("#1") == ["#1"] and issue_keys(" #3977 ") == ["#3977"]
    assert issue_keys("#1  0x00007f3a in ncnn::Net::load_param") == []
    assert issue_keys("same as MNN#3977, see #12") == ["mnn#3977"]
    line = "#1  0x00007f3a in ncnn::Net::load_param(char const*)"
    assert not set(table().pages(line)) & set(table().refs.get("#1", []))
