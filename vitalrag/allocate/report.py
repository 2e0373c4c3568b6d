"""A self-contained HTML picture of one ``AllocationRecord``.

One page, no external assets (inline CSS and SVG, no scripts, no URLs), so a
report can be mailed, attached to an issue or opened offline:

- the query, the policy and its parameters, tokens used against the budget;
- the budget as one row of segments: each slot's share b_i, with what it used;
- one card per selected object: role, score, where its lines come from, why it
  was chosen, the candidate views merged into it, and its own bar: the tokens
  its unclipped rendering needs (d_i), the share it was given (b_i) and the
  tokens its rendering used;
- the dropped views, with why.

Every piece of text from the record is escaped, its control characters too
(``kernel.printable``).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from vitalrag.kernel.printable import printable
from vitalrag.model import AllocationRecord, SlotRecord, ViewDecision

#: fill colours by role (given share); the used part is drawn darker
ROLE_COLOURS = {
    "core": ("#9ecae1", "#2171b5"),
    "companion": ("#fdd0a2", "#d94801"),
    "fill": ("#dadaeb", "#6a51a3"),
    "view": ("#c7e9c0", "#238b45"),
}
_NEEDED = "#f0f0f0"
_BAR_W = 1000  # SVG user units; the bar stretches to the card width

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222;
       margin: 2em auto; max-width: 1100px; padding: 0 1em; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
h2 { font-size: 1.15em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
.query { font-size: 1.1em; background: #f6f8fa; border-left: 4px solid #2171b5; padding: .5em .8em; }
.meta { color: #555; }
.meta code, td code, .card code { background: #f3f3f3; padding: 0 .25em; border-radius: 3px; }
.chip { display: inline-block; background: #eef; border-radius: 9px; padding: 0 .5em; margin: 0 .2em .2em 0;
        font-size: .9em; }
table { border-collapse: collapse; margin: .5em 0; width: 100%; }
td code { overflow-wrap: anywhere; }
th, td { text-align: left; padding: .2em .7em .2em 0; vertical-align: top; }
th { color: #555; font-weight: 600; border-bottom: 1px solid #ddd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: .7em 1em; margin: .8em 0; }
.card h3 { margin: 0 0 .3em 0; font-size: 1.05em; }
.role { display: inline-block; border-radius: 4px; padding: 0 .45em; color: #fff; font-size: .85em;
        margin-right: .4em; }
.slotno { color: #777; margin-right: .3em; }
.reason { color: #555; margin: .2em 0 .5em 0; }
.bar { display: block; width: 100%; height: 22px; margin: .3em 0 .1em 0; }
.barlabel { font-size: .9em; color: #444; font-variant-numeric: tabular-nums; }
.clipped { color: #b30000; font-weight: 600; }
.views { margin: .4em 0 0 0; padding-left: 1.2em; }
.views li { margin: .1em 0; }
.views .rep { font-weight: 600; }
.budget { display: flex; height: 30px; border: 1px solid #bbb; background: #fafafa; margin: .4em 0; }
.budget .seg { position: relative; height: 100%; box-sizing: border-box; border-right: 2px solid #fff;
               overflow: hidden; }
.budget .used { position: absolute; left: 0; bottom: 3px; height: 11px; }
.budget .seg span { position: absolute; left: 3px; top: 1px; font-size: 11px; line-height: 13px;
                    color: #222; }
.legend span { display: inline-block; margin-right: 1.2em; }
.sw { display: inline-block; width: .9em; height: .9em; vertical-align: -.1em; margin-right: .3em;
      border: 1px solid #999; }
pre { background: #f6f8fa; padding: .6em; overflow-x: auto; font-size: 12.5px; }
details summary { cursor: pointer; color: #2171b5; margin-top: .4em; }
.dropped td { color: #555; }
.dropped th:nth-child(3) { width: 40%; }
.dropped th:nth-child(4) { width: 17%; }
"""


def _e(value: object) -> str:
    return escape(printable(str(value)), quote=True)


def spans_text(spans: Sequence[tuple[int, int]]) -> str:
    """Source line spans as ``12-40, 52``."""
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in spans)


def _spans(slot: SlotRecord) -> str:
    if slot.tokens == 0:
        return "none (no tokens left)"
    return spans_text(slot.spans) or "none (descriptor only)"


def _role_badge(role: str) -> str:
    dark = ROLE_COLOURS.get(role, ROLE_COLOURS["fill"])[1]
    return f'<span class="role" style="background:{dark}">{_e(role)}</span>'


def _x(tokens: int, scale: int) -> float:
    return round(_BAR_W * tokens / scale, 2) if scale else 0.0


def slot_bar(slot: SlotRecord, scale: int, b_obj: int | None = None) -> str:
    """One object's bar: needed d_i (light grey), given b_i (light role colour),
    used tokens (dark role colour), and the per-object cap as a dashed line."""
    light, dark = ROLE_COLOURS.get(slot.role, ROLE_COLOURS["fill"])
    d, b, used = _x(slot.d, scale), _x(slot.b, scale), _x(slot.tokens, scale)
    parts = [
        f'<svg class="bar" data-slot="{slot.slot}" viewBox="0 0 {_BAR_W} 22" preserveAspectRatio="none" '
        f'role="img" aria-label="{_e(f"slot {slot.slot}: used {slot.tokens} of {slot.b} given, needs {slot.d}")}">',
        f'<rect x="0" y="1" width="{_BAR_W}" height="20" fill="#fff"/>',
        f'<rect x="0" y="1" width="{d}" height="20" fill="{_NEEDED}" stroke="#bbb" '
        f'vector-effect="non-scaling-stroke"><title>needs d = {slot.d} tokens</title></rect>',
        f'<rect x="0" y="4" width="{b}" height="14" fill="{light}"><title>given b = {slot.b} tokens</title></rect>',
        f'<rect x="0" y="7" width="{used}" height="8" fill="{dark}"><title>used {slot.tokens} tokens</title></rect>',
    ]
    if b_obj and b_obj < scale:
        x = _x(b_obj, scale)
        parts.append(f'<line x1="{x}" y1="0" x2="{x}" y2="22" stroke="#555" stroke-dasharray="3,3" '
                     f'vector-effect="non-scaling-stroke"><title>cap b_obj = {b_obj}</title></line>')
    parts.append("</svg>")
    return "".join(parts)


def budget_bar(slots: Sequence[SlotRecord], budget: int) -> str:
    """The whole budget B as one row of segments, one per slot's share b_i, each
    filled as far as the slot used it (CSS, so the segments can carry labels)."""
    scale = max(budget, sum(s.b for s in slots), 1)
    out = ['<div class="budget" role="img" '
           f'aria-label="{_e(f"budget {budget} tokens, {sum(s.tokens for s in slots)} used")}">']
    for s in slots:
        if s.b <= 0:
            continue
        light, dark = ROLE_COLOURS.get(s.role, ROLE_COLOURS["fill"])
        used = round(100 * s.tokens / s.b, 2) if s.b else 0
        out.append(
            f'<div class="seg" style="width:{round(100 * s.b / scale, 3)}%;background:{light}" '
            f'title="{_e(f"#{s.slot} {s.identifier}: b = {s.b}, used {s.tokens}")}">'
            f'<div class="used" style="width:{used}%;background:{dark}"></div>'
            f'<span>#{s.slot}</span></div>')
    out.append("</div>")
    return "".join(out)


def view_label(view_id: str, object_key: str) -> str:
    """A view id without its object's id in front, for places that show the
    object already: ``kind lines`` when the view lies in the object's file,
    else ``kind path:lines``. Ids of another shape come back unchanged."""
    prefix = f"{object_key}#"
    if not view_id.startswith(prefix):
        return view_id
    rest = view_id[len(prefix):]
    kind, _, where = rest.partition(":")
    path, _, lines = where.rpartition(":")
    if not path or not lines:
        return rest
    if f":{path}:" in f"{object_key}:":
        return f"{kind} {lines}"
    return f"{kind} {path}:{lines}"


def _view_item(v: ViewDecision, *, rep: bool, same_object: bool) -> str:
    if rep:
        what = "representative"
    elif same_object:
        what = "merged"
    else:  # exact dedup merges equal text of another object: say whose
        what = f"merged: {v.reason}"
    cls = ' class="rep"' if rep else ""
    label = view_label(v.view_id, v.object_key) if same_object else v.view_id
    return (f'<li{cls} title="{_e(v.reason)}">#{v.rank} <code>{_e(label)}</code> score {v.score:.4f} '
            f'<span class="meta">({_e(what)})</span></li>')


def _card(slot: SlotRecord, views: Sequence[ViewDecision], scale: int, b_obj: int | None,
          part: str | None) -> str:
    rep = [v for v in views if v.view_id == slot.view_id]
    merged = [v for v in views if v.status == "merged" and v.merged_into == slot.view_id]
    clipped = ' <span class="clipped">clipped</span>' if slot.clipped else ""
    lines = [
        f'<div class="card" id="slot-{slot.slot}" data-object="{_e(slot.object_key)}">',
        f'<h3><span class="slotno">#{slot.slot}</span>{_role_badge(slot.role)}{_e(slot.identifier)}</h3>',
        f'<div class="meta"><code>{_e(slot.object_key)}</code> &middot; {_e(slot.path)} lines '
        f'{_e(_spans(slot))} &middot; score {slot.score:.4f}</div>',
        f'<div class="reason">{_e(slot.reason)}</div>',
        slot_bar(slot, scale, b_obj),
        f'<div class="barlabel">used <b>{slot.tokens}</b> of b = {slot.b} given; '
        f'needs d = {slot.d}{clipped}</div>',
        f'<ul class="views">{"".join(_view_item(v, rep=True, same_object=True) for v in rep)}'
        f'{"".join(_view_item(v, rep=False, same_object=v.object_key == slot.object_key) for v in merged)}'
        "</ul>",
    ]
    if part:
        lines.append(f"<details><summary>rendered text ({slot.tokens} tokens)</summary>"
                     f"<pre>{_e(part)}</pre></details>")
    lines.append("</div>")
    return "\n".join(lines)


def render_html(record: AllocationRecord, *, query: str | None = None, parts: Sequence[str] = (),
                title: str = "VitalRAG allocation") -> str:
    """The report page for ``record``; ``parts`` (the allocation's renderings in
    slot order), when given, are shown under each object."""
    query = record.query if query is None else query
    params = record.params
    budget = int(params.get("budget", 0) or 0)
    b_obj = params.get("b_obj")
    # one scale for every object's bar, so bar lengths compare across objects
    scale = max((max(s.d, s.b, s.tokens) for s in record.slots), default=0) or 1
    dropped = [v for v in record.views if v.status == "dropped"]
    merged = sum(1 for v in record.views if v.status == "merged" and v.slot is not None)
    param_cells = " ".join(f"{_e(k)}=<code>{_e(v)}</code>" for k, v in sorted(params.items()))
    chips = "".join(f'<span class="chip">{_e(t)}</span>' for t in record.query_tokens) or "none"
    cap = b_obj if isinstance(b_obj, int) and 0 < b_obj < scale else None
    cap_note = f"<span>dashed line: per-object cap b_obj = {cap}</span>" if cap else ""
    legend = "".join(
        f'<span><i class="sw" style="background:{c}"></i>{_e(label)}</span>'
        for c, label in ((_NEEDED, "needed d (unclipped rendering)"),
                         (ROLE_COLOURS["core"][0], "given b (token share)"),
                         (ROLE_COLOURS["core"][1], "tokens used")))
    body = [
        f"<h1>{_e(title)}</h1>",
        f'<div class="query">{_e(query)}</div>',
        f'<p class="meta">policy <code>{_e(record.policy)}</code> &middot; {param_cells}</p>',
        f'<p class="meta">query tokens: {chips}</p>',
        f"<h2>Budget: {record.tokens} of {budget} tokens used by {len(record.slots)} objects</h2>",
        budget_bar(record.slots, budget),
        f'<p class="legend meta">{legend}{cap_note}</p>',
        f"<h2>Selected objects ({len(record.slots)}), with the {merged} views merged into them</h2>",
    ]
    for i, slot in enumerate(record.slots):
        body.append(_card(slot, record.views, scale, cap,
                          parts[i] if i < len(parts) else None))
    body.append(f"<h2>Dropped views ({len(dropped)})</h2>")
    if dropped:
        rows = "".join(f'<tr><td class="num">{v.rank}</td><td class="num">{v.score:.4f}</td>'
                       f"<td><code>{_e(v.object_key)}</code></td>"
                       f"<td><code>{_e(view_label(v.view_id, v.object_key))}</code></td>"
                       f"<td>{_e(v.reason)}</td></tr>"
                       for v in dropped)
        body.append('<table class="dropped"><tr><th class="num">rank</th><th class="num">score</th>'
                    f"<th>object</th><th>view</th><th>why</th></tr>{rows}</table>")
    else:
        body.append('<p class="meta">none</p>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}: {_e(query)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


__all__ = ["ROLE_COLOURS", "budget_bar", "render_html", "slot_bar", "spans_text", "view_label"]
