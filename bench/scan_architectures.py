"""How well does `kb scan` predict real engine failures on real architecture families?

For every ONNX file exported by bench/arch/export.py (hand-written ConvNeXt, ViT, Swin, UNet, GRU/LSTM,
LLaMA-style, deconvolution decoders, ... exported with dynamo=False at opset 13/17, dynamo=True, onnxsim,
onnxruntime quantization), `kb.match.scan.find_problems` says which entries it matches. The truth
comes from engine runs (bench/arch/label.py, recorded in bench/arch/labels.jsonl): an entry is a true
problem on a file when the engine fails there the way the entry describes (label.fails_as_described).

Per entry: true positives, missed files (the engine fails as described, the scan is silent) and
false alarms (the scan reports, the engine does not fail as described), with the files named.
An entry whose accepted status on the measured engine version is "fixed" is a guard: its matches
are not false alarms, and a failure as described there would be a regression; guards are listed apart.

    python bench/scan_architectures.py              # labels from bench/arch/labels.jsonl
    python bench/scan_architectures.py --relabel    # rerun the engines (cached by file and versions)
    python bench/scan_architectures.py --families resnet,vit   # only these families' files (a quick run)
    python bench/scan_architectures.py --real       # real implementations (transformers, timm: bench/arch/real.py),
                                                    # own venv, exports and labels (labels_real.jsonl), reported apart
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "arch"))

import export  # noqa: E402
import label  # noqa: E402

from kb.logs import error_line  # noqa: E402

SHOWN = 40  # files listed per entry and kind of error


def guard_state(entry, versions: dict[str, str], statuses=None) -> tuple[bool, str]:
    """Is the entry fixed on every one of its engines measured here, by its accepted status (as the
    site and `kb scan` derive it; from expected.yaml directly if that derivation is unavailable)?
    Returns (guard, the status text). `statuses`: one kb.match.status.Statuses for every entry, its records
    read in one pass (Statuses.prefetch), not one pass over the store per entry."""
    wanted = [(e, versions[e]) for e in entry.meta.engines if versions.get(e, "absent") != "absent"]
    try:
        from kb.match.status import Statuses, Wanted

        states = [(s.engine, s.version, s.state)
                  for s in (statuses or Statuses()).of(entry, [Wanted(e, v) for e, v in wanted])]
    except Exception:  # an older corpus revision whose checks the current kb cannot load
        states = [(e, v, _state_from_expected(entry, v)) for e, v in wanted]
    judged = [st for _, _, st in states if st in ("reproduces", "fixed", "differs")]
    text = "; ".join(f"{e} {v}: {st}" for e, v, st in states)
    return bool(judged) and all(st == "fixed" for st in judged), text


def _as_labelled(entry) -> bool:
    """The labels' pipelines ran on x86 with the engines' default options: an entry whose every bug check runs on
    an emulated CPU (a check's `cpu:`, kb.tools.arm64) or sets engine options (`options:`, e.g. ncnn's
    use_bf16_storage) fails on none of them, so they neither confirm nor refute its matches (masked)."""
    from kb.checks import load_checks

    bugs = [c for c in load_checks(entry).items.values() if c.kind.value == "bug"]
    return not bugs or any(not c.cpu and not c.options for c in bugs)


def _statuses(entries):
    try:
        from kb.match.status import Statuses
    except ImportError:  # an older kb
        return None
    statuses = Statuses()
    statuses.prefetch({e.slug for e in entries})
    return statuses


def _state_from_expected(entry, version: str) -> str:
    """Bug checks' accepted verdicts on `version`: any reproduces -> reproduces, all fixed -> fixed."""
    import yaml

    try:
        data = yaml.safe_load(entry.expected.read_text()) or {}
    except OSError:
        return "not-checked"
    verdicts = [cells[version]["verdict"] for cells in data.values() if isinstance(cells, dict) and version in cells]
    bug = [v for v in verdicts if v in ("reproduces", "fixed", "differs")]
    if not bug:
        return "not-checked"
    return "reproduces" if "reproduces" in bug else "fixed" if all(v == "fixed" for v in bug) else "differs"


def corpus(rev: str | None):
    """The entries of the working tree, or of git revision `rev` (extracted into a temporary folder)."""
    from kb.entries import load_all

    if rev is None:
        return load_all(ROOT), "working tree"
    import subprocess
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="kb-corpus-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "repros"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True).stdout
    return load_all(tmp), f"git {rev} ({sha.strip()})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--relabel", action="store_true", help="rerun the engine pipelines and rewrite labels.jsonl")
    ap.add_argument("--no-cache", action="store_true", help="with --relabel: ignore the cached engine runs")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--corpus", metavar="REV", help="judge the entries of this git revision (default: the working tree)")
    ap.add_argument("--entries", metavar="IDS", help="comma-separated ids or slugs to report (default: all)")
    ap.add_argument("--families", metavar="NAMES", help="comma-separated families whose files to scan (default: all)")
    ap.add_argument("--real", action="store_true", help="the real implementations (bench/arch/real.py) instead")
    args = ap.parse_args()
    source = export
    if args.real:  # the same scoring on another set of files and labels
        import real

        global REAL
        source, label.LABELS, REAL = real, real.LABELS, True
    families = args.families.split(",") if args.families else None
    if families and args.relabel:
        ap.error("--relabel rewrites labels.jsonl whole: run it on every family")
    if unknown := sorted(set(families or ()) - set(source._family_names())):
        ap.error(f"no such family: {', '.join(unknown)} (see bench/arch/models/__init__.py FAMILIES)")
    t0 = time.monotonic()

    import onnx

    from kb.match.scan import find_problems

    files = {f.name: f for f in source.ensure(families)}
    if args.relabel:
        labels = (real.relabel if args.real else label.relabel)(list(files.values()), jobs=args.jobs,
                                                                use_cache=not args.no_cache)
    elif label.LABELS.exists():
        labels = label.load()
    else:
        print(f"no {label.LABELS.relative_to(ROOT)} yet: run with --relabel", file=sys.stderr)
        return 2
    entries, where = corpus(args.corpus)
    versions = labels["engines"]

    # scan every labelled file
    matched: dict[str, dict[str, list[str]]] = {}  # file -> entry id -> "pattern: node, node"
    stale, absent = [], []
    for name, item in sorted(labels["files"].items()):
        if families and item["family"] not in families:
            continue
        f = files.get(name)
        if f is None:
            absent.append(name)
            continue
        if label._sha(f.path)[:16] != item["sha256"]:
            stale.append(name)
        model = onnx.load(str(f.path), load_external_data=False)
        by_entry: dict[str, list[str]] = defaultdict(list)
        for found in find_problems(entries, model).found:
            by_entry[found.entry.meta.id].append(f"{found.match.pattern}: {', '.join(found.match.nodes.values())}")
        matched[name] = by_entry
    scanned = sorted(matched)

    print("engines: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    print(f"corpus: {len(entries)} entries, {sum(len(e.meta.trigger) for e in entries)} trigger patterns, from the {where}")
    fams = Counter(labels["files"][n]["family"] for n in scanned)
    variants = Counter(labels["files"][n]["variant"] for n in scanned)
    print(f"files: {len(scanned)} ONNX files from {len(fams)} families; variants: "
          + ", ".join(f"{v} {c}" for v, c in sorted(variants.items())))
    if labels.get("export_failures"):
        print(f"not exported ({len(labels['export_failures'])}): " + "; ".join(
            f"{k}: {v[:90]}" for k, v in sorted(labels["export_failures"].items()) if "its source" not in v))
    if stale:
        print(f"WARNING: {len(stale)} files changed since labelling (rerun with --relabel): {', '.join(stale[:10])}")
    if absent:
        print(f"WARNING: {len(absent)} labelled files are not in the export cache: {', '.join(absent[:10])}")

    # the derived truth, per entry and file (label.fails_as_described), computed once
    positives = {e.meta.id: {n: why for n in scanned
                             if (why := label.fails_as_described(e, *_evidence(labels, n)))}
                 for e in entries}
    wanted = set(args.entries.split(",")) if args.entries else None
    # per file, pipeline -> the entries whose log line or crash signal shows there: a NaN or wrong output in
    # that run may be theirs, so it cannot refute another entry (_refuted)
    described: dict[str, dict[str, set[str]]] = {n: defaultdict(set) for n in scanned}
    for e in entries:
        for n in scanned:
            for hit in label.signature_hits(e, *_evidence(labels, n)):
                if _kind(hit) in SPECIFIC:
                    described[n][hit.split(": ", 1)[0]].add(e.meta.id)

    rows, details, guards = [], [], []
    tp_all = fn_all = fa_all = tp_spec = pos_spec = masked_all = 0
    by_split: dict[str, Counter] = defaultdict(Counter)  # per split (tuned / held out): tp, missed, false, masked
    false_by: dict[str, Counter] = defaultdict(Counter)  # per split: entry id -> false alarms
    statuses = _statuses(entries)
    for e in entries:
        eid = e.meta.id
        if wanted and eid not in wanted and e.slug not in wanted:
            continue
        is_guard, status = guard_state(e, versions, statuses)
        pos = positives[eid]
        tp = [n for n in scanned if n in pos and eid in matched[n]]
        miss = [n for n in scanned if n in pos and eid not in matched[n]]
        scope = [p for p in label.PIPELINES if label.PIPELINE_ENGINES[p] & set(e.meta.engines)
                 and ("quantizer" in e.meta.components) == (p in label.QUANTIZER_PIPELINES)] if _as_labelled(e) else []
        reported = [n for n in scanned if n not in pos and eid in matched[n]]
        masked = [n for n in reported if not _refuted(e, *_evidence(labels, n), _pattern_scope(e, matched[n][eid], scope),
                                                      {p for p, ids in described[n].items() if ids - {eid}})]
        false = [n for n in reported if n not in masked]
        if is_guard:
            guards.append((e, status, tp + false, list(pos)))
            continue
        kinds = Counter(_kind(why) for why in pos.values())
        specific = [n for n in pos if _kind(pos[n]) in SPECIFIC]
        tp_all, fn_all, fa_all = tp_all + len(tp), fn_all + len(miss), fa_all + len(false)
        masked_all += len(masked)
        for kind, names in (("tp", tp), ("missed", miss), ("false", false), ("masked", masked)):
            for n in names:
                by_split[_split(labels["files"][n]["family"])][kind] += 1
        for n in false:
            false_by[_split(labels["files"][n]["family"])][eid] += 1
        tp_spec, pos_spec = tp_spec + len([n for n in specific if n in tp]), pos_spec + len(specific)
        rows.append((eid, e.slug, len(pos), len(tp), len(miss), len(false), len(masked), _pct(len(tp), len(pos)),
                     _pct(len([n for n in specific if n in tp]), len(specific)), _pct(len(tp), len(tp) + len(false)),
                     ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))))
        lines = [f"\n{eid} {e.slug}  (scope: {', '.join(scope)}; status here: {status})"]
        lines.append(f"  missed ({len(miss)}): the engine fails as described, the scan is silent")
        lines += [f"    {n}: {pos[n]}" for n in miss[:SHOWN]] + ([f"    ... {len(miss) - SHOWN} more"] if len(miss) > SHOWN else [])
        lines.append(f"  false alarms ({len(false)}): the scan reports it, the engine does not fail as described")
        for n in false[:SHOWN]:
            outcomes = ", ".join(f"{p}={labels['files'][n]['pipelines'][p]['outcome']}"
                                 for p in _pattern_scope(e, matched[n][eid], scope)
                                 if labels["files"][n]["pipelines"].get(p, {}).get("outcome", "skipped") != "skipped")
            lines.append(f"    {n}: {_matches(matched[n][eid])}  [{outcomes or 'no pipeline in scope ran'}]")
        lines.append(f"  masked ({len(masked)}): the scan reports it, but every pipeline that measures the matched "
                     "pattern stopped on another failure first, or failed in a way no ablation pins on a trigger")
        for n in masked[:SHOWN]:
            ps = _pattern_scope(e, matched[n][eid], scope)
            lines.append(f"    {n}: " + "; ".join(f"{p}: {_first_error(labels['files'][n]['pipelines'][p])[:80]}"
                                                  for p in ps if p in labels["files"][n]["pipelines"]
                                                  and labels["files"][n]["pipelines"][p]["outcome"] != "skipped"))
        lines.append(f"  true positives ({len(tp)}): {', '.join(tp)}")
        by_pattern = Counter(p for n in tp + false for p in dict.fromkeys(x.split(":")[0] for x in matched[n][eid]))
        lines.append("  files matched per pattern: " + (", ".join(f"{k} {v}" for k, v in sorted(by_pattern.items())) or "none"))
        details.append("\n".join(lines))

    print("\nper entry (positive: the engine fails as the entry's signatures describe; predicted: kb scan matches)")
    head = ("entry", "slug", "pos", "TP", "missed", "false", "masked", "recall", "recall log/crash", "precision",
            "positives by signature kind")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print(f"overall (non-guard entries): recall {tp_all}/{tp_all + fn_all} {_pct(tp_all, tp_all + fn_all)}, "
          f"on log/crash evidence {tp_spec}/{pos_spec} {_pct(tp_spec, pos_spec)}; "
          f"false alarms {fa_all}, precision {tp_all}/{tp_all + fa_all} {_pct(tp_all, tp_all + fa_all)}; "
          f"masked {masked_all} (neither confirmed nor refuted: every pipeline that measures the pattern stops earlier on "
          f"another failure, or fails in a way no ablation pins on a trigger)")
    if args.real:
        c = by_split["real"]
        print(f"real implementations: recall {c['tp']}/{c['tp'] + c['missed']}, false alarms {c['false']} "
              f"({_pct(c['tp'], c['tp'] + c['missed'])}; masked {c['masked']})")
    for split in () if args.real else ("tuned", "held out"):
        c = by_split[split]
        fams = sorted({labels["files"][n]["family"] for n in scanned if _split(labels["files"][n]["family"]) == split})
        print(f"  {split} families ({len(fams)}): recall {c['tp']}/{c['tp'] + c['missed']} "
              f"{_pct(c['tp'], c['tp'] + c['missed'])}; false alarms {c['false']}{_by_entry(false_by[split])}; "
              f"masked {c['masked']}")
    print("  (real: transformers / timm models, bench/arch/models_real.py, never used to tune)" if args.real else
          "  (tuned: the families the trigger patterns were fitted to; held out: bench/arch/models HELD_OUT, "
          "added after, never used to tune)")
    print("  (a NaN or mismatch is the entry's only with its own evidence in the log, or when it goes away on the "
          "file with the entry's trigger taken out (bench/arch/ablate.py); 'recall log/crash' counts only positives "
          "shown by a log line or a crash signal)")
    for d in details:
        print(d)

    if guards:
        print("\nguards (accepted status on the measured engine is fixed: a match is not a false alarm)")
        for e, status, hits, fails in guards:
            print(f"  {e.meta.id} {e.slug} ({status}): matched {len(hits)} files, "
                  f"engine fails as described on {len(fails)}")
            for n in hits[:SHOWN]:
                print(f"    guarded {n}: {_matches(matched[n][e.meta.id])}")
            for n in fails[:SHOWN]:
                flag = "REGRESSION? (matched)" if n in hits else "fails as described, not matched"
                print(f"    {flag} {n}: {positives[e.meta.id][n]}")

    # one piece of evidence claimed by several entries: their signatures overlap
    claims: dict[tuple, set] = defaultdict(set)
    files_of: dict[tuple, set] = defaultdict(set)
    for e in entries:
        for n in scanned:
            for hit in label.signature_hits(e, *_evidence(labels, n)):
                pipeline, rest = hit.split(": ", 1)
                line = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "N", rest.split("): ", 1)[1])
                line = re.sub(r"\S*[_/]\S*", "<name>", line)[:110]  # tensor names
                key = (pipeline, _kind(hit), line)
                claims[key].add(e.meta.id)
                files_of[key].add(n)
    shared = sorted(((k, v) for k, v in claims.items() if len(v) > 1), key=lambda kv: (-len(files_of[kv[0]]), kv[0]))
    print(f"\nevidence that the signatures of several entries claim ({len(shared)}; files, pipeline, kind, evidence: entries)")
    for (pipeline, kind, line), ids in shared[:30]:
        print(f"  {len(files_of[(pipeline, kind, line)]):3d}  {pipeline:20s} {kind:8s} {line}: {', '.join(sorted(ids))}")

    # engine failures that no entry claims: what the corpus does not know about (yet)
    unclaimed: Counter = Counter()
    examples: dict = {}
    for n in scanned:
        item = labels["files"][n]
        claimed = {why.split(":")[0] for e in entries if (why := label.fails_as_described(e, *_evidence(labels, n)))}
        for p, ev in item["pipelines"].items():
            if ev["outcome"] in ("ok", "skipped") or p in claimed:
                continue
            key = (p, ev["outcome"], _first_error(ev))
            unclaimed[key] += 1
            examples.setdefault(key, n)
    print(f"\nengine failures no entry claims ({sum(unclaimed.values())} file x pipeline; by pipeline, outcome, first error line)")
    for (p, outcome, line), c in unclaimed.most_common(25):
        print(f"  {c:3d}  {p:20s} {outcome:8s} {line[:110]}  (e.g. {examples[(p, outcome, line)]})")
    print(f"\n{time.monotonic() - t0:.1f}s")
    # the one line to compare runs by: recall on engine-confirmed failures and false alarms, per split
    print("summary: " + "; ".join(
        f"{split}: recall {c['tp']}/{c['tp'] + c['missed']} {_pct(c['tp'], c['tp'] + c['missed'])}, "
        f"false alarms {c['false']}{_by_entry(false_by[split])}, masked {c['masked']}"
        for split in (("real",) if args.real else ("tuned", "held out")) for c in [by_split[split]]))
    return 0


def _by_entry(counts: Counter) -> str:
    """' (KB059 1, KB060 2)': false alarms per entry, or nothing when there are none."""
    return f" ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})" if counts else ""


SPECIFIC = ("log", "crash")


REAL = False  # --real: every file is a real implementation's


def _split(family: str) -> str:
    import models

    if REAL:
        return "real"

    return "held out" if family in getattr(models, "HELD_OUT", ()) else "tuned"


def _evidence(labels: dict, name: str) -> tuple[dict, dict]:
    """One file's pipelines and ablation runs, as label.fails_as_described takes them."""
    item = labels["files"][name]
    return item["pipelines"], item.get("ablations", {})


_CHECKS: dict = {}


def _checks(entry) -> dict:
    """An entry's declared checks, loaded once per run."""
    from kb.checks import load_checks

    if entry.slug not in _CHECKS:
        _CHECKS[entry.slug] = load_checks(entry).items
    return _CHECKS[entry.slug]


def _pattern_scope(entry, found: list[str], scope: list[str]) -> list[str]:
    """The pipelines that the matched trigger patterns' own bug checks measure (a pattern names its checks;
    one that names none is measured by every engine of the entry): a pipeline another engine converts with
    can neither confirm nor refute that pattern."""
    checks = _checks(entry)
    names = {x.split(":")[0] for x in found}
    # A pattern that names no checks is measured by the engines of the entry's bug checks, not by every
    # engine it lists: an engine that only a workaround or control check uses (pnnx for an onnx2ncnn bug)
    # is where the entry says the problem does not occur, so its clean run confirms the workaround and
    # cannot refute the match.
    bug_engines = {c.engine for c in checks.values() if c.kind in ("bug", "variant")} or set(entry.meta.engines)
    engines: set[str] = set()
    for t in entry.meta.trigger:
        if t.name in names:
            own = [checks[c] for c in t.measured_by(checks) if checks[c].kind in ("bug", "variant")]
            engines |= {c.engine for c in own} if t.checks else bug_engines
    return [p for p in scope if label.CONVERTER[p] in engines] or scope


def _refuted(entry, pipelines: dict, ablations: dict, scope: list[str], others: set[str] = frozenset()) -> bool:
    """Does some pipeline in scope show that the engine does not have this entry's problem on the file?
    It does when it runs to correct outputs; when its outputs are NaN or wrong though the entry describes
    no such failure; or when the entry's ablation shows the failure is another's (it stays with this
    trigger alone put back). A pipeline that stopped earlier (error, crash), whose silent failure no
    ablation can pin on a trigger, or whose NaN or wrong output follows another entry's log line or crash
    in the same run (`others`: onnx2ncnn prints "Unsupported transpose type !", writes the model anyway, and
    its outputs are garbage whatever else is wrong), shows nothing: the match is then "masked", neither
    confirmed nor refuted."""
    kinds = {k for s in entry.meta.signatures for k in s.outcomes()}
    for p in scope:
        outcome = pipelines.get(p, {}).get("outcome", "skipped")
        ablated = (ablations.get(entry.slug) or {}).get("pipelines", {}).get(p, {})
        if outcome == "ok":
            return True
        if outcome in ("nan", "mismatch") and p in others and ablated.get("clean") != "ok":
            continue
        if outcome in ("nan", "mismatch") and outcome not in kinds:
            return True
        if outcome in ("nan", "mismatch") and ablated.get("clean") == "ok" and ablated.get("trigger_only") != outcome:
            return True
    return False


def _kind(why: str) -> str:
    """The signature kind in a fails_as_described line: 'pipeline: id (kind): evidence'."""
    return why.split(" (", 1)[1].split(")", 1)[0]


def _pct(a: int, b: int) -> str:
    return f"{a / b:.0%}" if b else "-"


def _matches(found: list[str]) -> str:
    """'pattern: nodes' of the first match, and how many matches of each pattern there are."""
    count = Counter(m.split(":")[0] for m in found)
    more = ", ".join(f"{p} x{c}" for p, c in count.items())
    return f"{found[0]}  [{more}]" if len(found) > 1 else found[0]


def _first_error(ev: dict) -> str:
    if ev["outcome"] in ("mismatch", "nan"):
        return "outputs differ" if ev["outcome"] == "mismatch" else "NaN outputs"
    lines = [ln for ln in ev.get("excerpt", "").splitlines() if ln and not ln.startswith(("$", "["))]
    return re.sub(r"\d+", "N", error_line("\n".join(lines)))


if __name__ == "__main__":
    sys.exit(main())
