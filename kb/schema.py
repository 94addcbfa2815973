"""Schema of an entry's front matter: the single source of its metadata."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from kb.engines import ENGINES
from kb.tags import check as known_tag
from kb.pattern import Pattern
from kb.verdicts import EntryKind


def _known_engine(name: str) -> str:
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; known: {', '.join(ENGINES)}")
    return name


Engine = Annotated[str, AfterValidator(_known_engine)]


def _searchable(word: str) -> str:
    if not re.search(r"\w", word):
        raise ValueError(f"{word!r} has no letter or digit, so the site's search cannot find it: write what it "
                         "stands for ('floor division', not '//')")
    return word


Synonym = Annotated[str, AfterValidator(_searchable)]  # a word people use for an entry or a message
Component = Literal["converter", "runtime", "quantizer"]
Symptom = Literal["conversion-error", "runtime-error", "crash", "wrong-output", "nan-output"]
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
TITLE_MAX = 90  # an entry's title: engine, symptom, trigger; a few lines on a phone, the detail in the body


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Signature(Strict):
    """What is observed when the bug is present."""

    id: str = Field(pattern=SLUG)
    # log: a line; crash: a signal; mismatch: wrong values; nan: NaN or inf; shape: an output of another
    # shape than torch's (unit axes aside), e.g. reduction axes ignored
    kind: Literal["log", "crash", "mismatch", "nan", "shape"]
    # log: regex searched in every step's output; crash: regex on the signal name.
    pattern: str | None = None
    # A real line as an engine prints it; searched for on the site, matched by `kb explain`.
    example: str | None = None
    summary: str
    # The engine's message this signature is an instance of: repros/_messages/<message>.yaml, /messages/<id>/.
    message: str | None = Field(None, pattern=SLUG)
    # Regexes searched in the whole log (use (?s) to span lines) whose presence is specific to this
    # entry, where the message alone is not. A named group `custom_op` counts only if the op it captures
    # is not one ONNX (or onnxruntime) defines.
    evidence: list[str] = []
    evidence_summary: str = ""  # the evidence in words: what to look for in a log to confirm this entry
    # The step that fails this way: the first word of its name (mnnconvert, mnnquant, MNN, ncnn, pnnx,
    # onnx2ncnn). A crash (required) or a generic message's line (required) elsewhere is another failure.
    step: Literal["mnnconvert", "mnnquant", "MNN", "ncnn", "pnnx", "onnx2ncnn", "onnxruntime"] | None = None
    # log: the same failure may kill `step` with this signal instead (regex on its name), where the engine reads
    # memory it does not own and what it finds varies from run to run.
    or_signal: str | None = None
    # mismatch: some or all of the wrong values may be NaN or inf instead, for the same reason (memory the engine
    # does not own): one outcome, not two that swap from run to run.
    or_nan: bool = False

    @field_validator("evidence")
    @classmethod
    def _evidence_compiles(cls, items: list[str]) -> list[str]:
        for rx in items:
            try:
                re.compile(rx)
            except re.error as e:
                raise ValueError(f"bad regex {rx!r}: {e}") from None
        return items

    def outcomes(self) -> set[str]:
        """The kinds of outcome this signature describes: its kind, and NaN too for a mismatch with or_nan."""
        return {self.kind, "nan"} if self.or_nan else {self.kind}

    @model_validator(mode="after")
    def _pattern_fits_kind(self) -> Signature:
        if self.kind in ("log", "crash") and not self.pattern:
            raise ValueError(f"signature {self.id!r}: kind {self.kind} needs a pattern")
        if self.kind == "crash" and not self.step:
            raise ValueError(f"signature {self.id!r}: kind crash needs `step`, the step that crashes")
        if self.or_signal and (self.kind != "log" or not self.step):
            raise ValueError(f"signature {self.id!r}: or_signal needs kind log and `step`, the step that crashes")
        if self.or_nan and self.kind != "mismatch":
            raise ValueError(f"signature {self.id!r}: or_nan is for kind mismatch (wrong values, NaN among them)")
        if self.pattern:
            try:
                rx = re.compile(self.pattern)
            except re.error as e:
                raise ValueError(f"signature {self.id!r}: bad regex: {e}") from None
            if self.kind == "log" and self.example and not rx.search(self.example):
                raise ValueError(f"signature {self.id!r}: pattern does not match its example")
        return self

    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern or "")


class Cause(Strict):
    """An upstream cause of a message that is not an entry of its own (yet)."""

    ref: str = Field(pattern=r"^[\w.-]+/[\w.-]+#\d+$")  # e.g. alibaba/MNN#2336
    cause: str

    @property
    def url(self) -> str:
        repo, num = self.ref.split("#")
        return f"https://github.com/{repo}/issues/{num}"


def _template_regex(template: str) -> str:
    """A template's literal text, each <placeholder> standing for any value, runs of spaces for any spaces."""
    parts = re.split(r"<[\w ]+>", template)
    return "(.+?)".join(r"\s+".join(re.escape(w) for w in part.split(" ")) for part in parts)


class Message(Strict):
    """An engine's message, as the index of its known causes (repros/_messages/<id>.yaml)."""

    id: str = Field(pattern=SLUG)  # stable address: /messages/<id>/
    engines: list[Engine] = Field(min_length=1)
    pattern: str  # the message with any argument
    example: str  # a real line as an engine prints it
    # The message as readers see it, each argument a <placeholder>: `Broad cast error, dim1 = <n>, dim2 = <n>`.
    # The page's title. Without it, the example with its numbers replaced (Message.shown).
    template: str = ""
    summary: str
    generic: bool  # printed for many causes: seeing it alone attributes nothing
    # Never the cause where a log shows another message too: printed because something failed before it (a
    # segfault, "network graph not ready") or harmless alone (MNN's first-run "Load Cache file error").
    secondary: bool = False
    causes: list[Cause] = []
    # How people who met it put it, in English and Chinese ("ex.extract 返回 -100", "opencl 找不到后端"): the
    # search and kb explain read these as an entry's synonyms. zh: what the message means, in Chinese.
    synonyms: list[Synonym] = []
    zh: str = ""
    # A message that an engine lacks an op ("Einsum not supported yet!"): a regex whose group 1, at each match in
    # a line of it, is an ONNX op so named. The op's figure in onnx's own node tests on that engine goes with the
    # message (kb/opfigures.py). Only where the name is ONNX's: not MNN's TFLite names, nor onnxruntime's contrib.
    unsupported_op: str = ""

    @property
    def shown(self) -> str:
        return self.template or re.sub(r"\b\d+(\.\d+)*\b", "<n>", self.example.strip())

    @property
    def upstream(self) -> str:
        """'N known upstream cause(s)' for a reply; '' where the page lists none (its causes are the entries citing it)."""
        n = len(self.causes)
        return f"{n} known upstream cause{'s' * (n != 1)}" if n else ""

    @model_validator(mode="after")
    def _pattern_matches_example(self) -> Message:
        try:
            rx = re.compile(self.pattern)
        except re.error as e:
            raise ValueError(f"bad regex: {e}") from None
        if not rx.search(self.example):
            raise ValueError("pattern does not match its example")
        if self.unsupported_op:
            try:
                op = re.compile(self.unsupported_op)
            except re.error as e:
                raise ValueError(f"unsupported_op: bad regex: {e}") from None
            if op.groups < 1 or not op.search(self.example):
                raise ValueError("unsupported_op must match the example, its group 1 the op")
        if self.template and not re.search(_template_regex(self.template), self.example):
            raise ValueError("template does not fit its example (its text, with any value for each <placeholder>)")
        return self


class Limit(Strict):
    """A workaround check outside the workaround's scope: its failure documents a limit, not a breakage."""

    check: str = Field(pattern=SLUG)
    note: str  # the limit in a reader's words: "not from ONNX exported at opset 18"


class Workaround(Strict):
    id: str = Field(pattern=SLUG)
    summary: str
    scope: str = ""  # the cases it applies to: an export path, an opset range, a model family
    limits: list[Limit] = []
    # It works on some models and not others: verified where any in-scope check works, shown with the spread.
    model_dependent: str = ""  # why, in a reader's words
    how: str = ""  # the command or code to apply it, shown in replies as a code block

    @property
    def sentence(self) -> str:
        """The summary as a sentence: most are written without a full stop, and the page and the reply go on after it
        ("Applies ...", "It applies ...")."""
        text = self.summary.rstrip()
        return text if text.endswith((".", "!", "?", "。")) else f"{text}."


class Upstream(Strict):
    ref: str = Field(pattern=r"^[\w.-]+/[\w.-]+#\d+$")  # e.g. alibaba/MNN#3239
    note: str = ""

    @property
    def url(self) -> str:
        repo, num = self.ref.split("#")
        return f"https://github.com/{repo}/issues/{num}"


class Guard(Strict):
    """The problem is fixed in every version measured here, and the entry keeps it fixed."""

    fixed_in: str | None = None  # the release that fixed it, when upstream says so
    source: str | None = Field(None, pattern=r"^[\w.-]+/[\w.-]+#\d+$")  # where upstream says so
    note: str = ""


class Chinese(Strict):
    """A short Chinese summary written for the site's search: title, then keywords of each section."""

    title: str
    symptom: str
    cause: str
    workaround: str


class CheckRow(Strict):
    """One check as data: which engine path it runs (kb.pipelines), on which case, judged how. Exactly one
    of `bug` (its signatures), `variants` (the same, one check per case of repro.py's variants()),
    `control` and `workaround` (the workaround's id) says what it is for."""

    name: str | None = Field(None, pattern=SLUG)  # every row but a variants row
    bug: list[str] | None = None
    variants: list[str] | None = None
    control: bool = False
    workaround: str | None = None
    run: str  # a pipeline of kb.pipelines
    case: str | None = None  # the reproducer's case (a variants row runs each variant)
    engine: Engine | None = None  # whose release the verdict is filed under; default: the pipeline's
    # the pipeline's options (kb.pipelines lists each one's)
    source: Literal["torchscript", "onnx"] | None = None
    inputs: list[str] | None = None
    outputs: list[str] | None = None
    flags: list[str] | None = None
    cpu: str | None = None
    precision: Literal["normal", "low", "high", "low_bf16"] | None = None
    fp16: bool | None = None
    batch: bool | None = None
    options: dict[str, bool | int] | None = None
    method: Literal["KL", "EMA", "ADMM"] | None = None
    samples: int | None = Field(None, ge=1, le=64)
    script: str | None = Field(None, pattern=r"^[\w.-]+\.py$")  # a file in the entry's folder
    mode: str | None = None
    lists: bool | None = None
    memcheck: bool | None = None
    atol: float | None = None
    rtol: float | None = None
    range_tol: float | None = None  # quantized outputs: max diff as a fraction of the output range
    # A failure that depends on the heap's layout (a read past the end of a list) shows in some runs and not
    # others: each attempt runs with other path lengths and another environment (kb.harness.layout); one decides.
    attempts: int | None = Field(None, ge=2, le=10)
    # a variants row over some of the variants: those whose name `match` finds, and `skip` does not (regexes)
    match: str | None = None
    skip: str | None = None
    doc: str = ""

    @model_validator(mode="after")
    def _one_kind(self) -> CheckRow:
        from kb.pipelines import PIPELINES

        kinds = [k for k in ("bug", "variants", "workaround") if getattr(self, k) is not None] + \
            ["control"] * self.control
        if len(kinds) != 1:
            raise ValueError("a check row says exactly one of bug, variants, control, workaround")
        if self.run not in PIPELINES:
            raise ValueError(f"unknown pipeline {self.run!r}; known: {', '.join(PIPELINES)}")
        wrong = [o for o in self.settings() if o not in PIPELINES[self.run].options]
        if wrong:
            raise ValueError(f"pipeline {self.run!r} takes no option {', '.join(wrong)}")
        why = PIPELINES[self.run].refuse(self.settings()) if PIPELINES[self.run].refuse else ""
        if why:
            raise ValueError(why)
        unset = [o for o in PIPELINES[self.run].required if o not in self.settings()]
        if unset:
            raise ValueError(f"pipeline {self.run!r} needs {', '.join(unset)}")
        if (self.match or self.skip) and self.variants is None:
            raise ValueError("match and skip select variants: only a variants row takes them")
        for pattern in (self.match, self.skip):
            try:
                re.compile(pattern or "")
            except re.error as e:
                raise ValueError(f"not a regular expression: {pattern!r} ({e})") from None
        if (self.variants is None) != (self.case is not None and self.name is not None):
            raise ValueError("a row names its check and its case; a variants row neither (each variant is a case)")
        return self

    def settings(self) -> dict:
        """The pipeline's options the row sets."""
        return {k: getattr(self, k) for k in ("source", "inputs", "outputs", "flags", "cpu", "precision", "fp16",
                                              "batch", "options", "method", "samples", "script", "mode", "lists",
                                              "memcheck")
                if getattr(self, k) is not None}


class EntryMeta(Strict):
    id: str = Field(pattern=r"^KB\d{3}$")  # stable short id, never reused
    title: str
    added: date
    kind: EntryKind = EntryKind.ENGINE_BUG  # a user error or a tool hazard reads differently on the page
    engines: list[Engine] = Field(min_length=1)
    components: list[Component] = Field(min_length=1)
    symptom: Symptom
    trigger: list[Pattern] = []  # an engine bug needs one; a user error or tool hazard may have no graph trigger
    # An engine bug no graph property predicts (measured: the same op fails in one model and not in another)
    # says why instead of a trigger; `kb scan` then never reports it, rather than on every model.
    untriggered: str = ""
    signatures: list[Signature] = Field(min_length=1)
    upstream: list[Upstream] = []
    tags: list[Annotated[str, AfterValidator(known_tag)]] = []  # the vocabulary of kb/tags.py
    workarounds: list[Workaround] = []
    aliases: list[str] = []  # former slugs, kept as redirects
    guard: Guard | None = None  # a regression guard: declared, not inferred from tags
    synonyms: list[Synonym] = []  # the words users write for it (e.g. deconvolution, 反卷积): searched on the site
    zh: Chinese | None = None  # a Chinese summary, shown and searched on the site
    checks: list[CheckRow] = []  # checks as data; more steps than one path: functions in test_checks.py

    @field_validator("title")
    @classmethod
    def _short_title(cls, title: str) -> str:
        if len(title) > TITLE_MAX:
            raise ValueError(f"{len(title)} characters, at most {TITLE_MAX}: engine, symptom and trigger in a few "
                             "words; the detail goes to the page's Symptom section")
        return title

    @field_validator("signatures", "workarounds", "trigger")
    @classmethod
    def _unique_ids(cls, items: list) -> list:
        ids = [getattr(i, "id", None) or getattr(i, "name", None) for i in items]
        dup = {i for i in ids if ids.count(i) > 1}
        if dup:
            raise ValueError(f"duplicate ids: {sorted(dup)}")
        return items

    @model_validator(mode="after")
    def _bug_has_trigger(self) -> EntryMeta:
        if self.kind == EntryKind.ENGINE_BUG and not (self.trigger or self.untriggered):
            raise ValueError("trigger: an engine bug needs at least one pattern, for `kb scan` "
                             "(or `untriggered`: why no graph pattern predicts it)")
        if self.trigger and self.untriggered:
            raise ValueError("untriggered: an entry with a trigger pattern has no reason to give for lacking one")
        return self

    def signature(self, sid: str) -> Signature:
        return next(s for s in self.signatures if s.id == sid)
