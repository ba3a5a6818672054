/* tfexec explain: draws the page from its JSON data (the script element #tfexec-data).
   Three linked panes: the program's text (nodes are clickable spans), the lowered snoc list
   (one row per slot, loop bodies under their loop with an iteration slider) and the selected
   node's value from both routes. Loads nothing: no network, no fonts, no external script. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("tfexec-data").textContent);
  var rows = DATA.rows, loops = DATA.loops, values = DATA.values, counts = DATA.counts;
  var verdict = DATA.verdict || {status: "ok", text: "", row: null, iterations: {}, errors: []};
  var state = {sel: null, iters: {}, open: {}};
  var rowEls = [], okEls = [], markEls = [], spanEls = {}, sliders = {};
  var readers = rows.map(function () { return []; });
  rows.forEach(function (r) { r.reads.forEach(function (rd) { readers[rd[2]].push(r.i); }); });

  var h = TfexecDraw.h, fmt = TfexecDraw.fmt, drawValue = TfexecDraw.drawValue;
  /* %3 at the top; %5.2 is slot 2 of the body of the loop at %5 (each body numbers its slots from 0). */
  function slotName(r) { return r.sn || "%" + r.slot; }
  /* Whether the sliders show the iteration where the program failed (a loop that failed at
     iteration 2 computed iterations 0 and 1: they are not "failed here"). */
  function atFailure(r) {
    if (verdict.row !== r.i || !verdict.errors.length) return false;
    return r.loops.every(function (L) { var want = verdict.iterations[L]; return want === undefined || iterOf(L) === want; });
  }
  function rowTitle(r) { return slotName(r) + " " + (r.key || r.label); }
  function slotLink(target, text) {
    var a = h("a", {cls: "slot", href: "#", "data-row": target, text: text, title: rowTitle(rows[target])});
    a.addEventListener("click", function (e) { e.preventDefault(); e.stopPropagation(); select(target); });
    return a;
  }

  /* -- loops and iterations ------------------------------------------------------------ */
  function iterOf(L, iters) {
    var i = iters && iters[L] !== undefined ? iters[L] : (state.iters[L] || 0);
    var n = Math.min(countOf(L, iters), DATA.max_iterations);
    return Math.max(0, Math.min(i, n - 1));
  }
  function countOf(L, iters) {
    var key = resolve(rows[L], iters).key;
    return typeof key === "string" && counts[key] !== undefined ? counts[key] : 0;
  }
  /* Where a row's value is at the given iterations: {key} (a record of DATA.values), {index},
     or {} (no value); ``note`` says where a body input's value came from. */
  function resolve(r, iters) {
    if (r.kind === "frontier") {
      var outer = resolve(rows[r.origin], iters);
      outer.note = "the outer slot " + slotName(rows[r.origin]) + " (" + rows[r.origin].label + "), passed unchanged to every iteration";
      return outer;
    }
    if (r.kind === "carry") {
      var L = r.body, i = iterOf(L, iters);
      if (i === 0) {
        var init = resolve(rows[r.origin], iters);
        init.note = "iteration 0: its initial value, the outer slot " + slotName(rows[r.origin]) + " (" + rows[r.origin].label + ")";
        return init;
      }
      var prev = Object.assign({}, iters || {}); prev[L] = i - 1;
      var fed = resolve(rows[r.feedback], prev);
      fed.note = "iteration " + i + ": the body output " + slotName(rows[r.feedback]) + " (" + rows[r.feedback].label + ") of iteration " + (i - 1);
      return fed;
    }
    if (r.kind === "index") return {index: iterOf(r.body, iters)};
    if (!r.vkey) return {};
    var n = 0;
    var key = r.vkey.replace(/\[\*\]/g, function () { var L = r.loops[n++]; return "[" + iterOf(L, iters) + "]"; });
    return {key: key};
  }
  function recordOf(r) { var where = resolve(r); return where.key !== undefined ? values[where.key] : undefined; }
  function routeMark(r) {
    if (atFailure(r)) return ["!", "ok-err", "failed here"];
    var rec = recordOf(r);
    if (r.kind === "index") return ["\u00b7", "", "the loop index"];
    if (!rec) return ["\u00b7", "", "no value recorded"];
    if (rec.eq) return ["=", "ok-eq", "bitwise equal on both routes"];
    if (rec.diff) return ["\u2260", "ok-ne", "the routes differ"];
    return ["\u00b7", "", rec.d ? "direct route only" : "lowered route only"];
  }

  /* -- the header ---------------------------------------------------------------------- */
  function buildHeader() {
    document.getElementById("title").textContent = DATA.title;
    document.getElementById("about").textContent = DATA.about;
    var v = document.getElementById("verdict");
    v.className = verdict.status;
    v.textContent = verdict.text;
    if (verdict.row !== null && verdict.row !== undefined) {
      var b = h("button", {type: "button", id: "show-failing", text: "show the failing node"});
      b.addEventListener("click", function () { applyIterations(verdict.iterations); select(verdict.row); });
      v.appendChild(b);
    }
    var errs = document.getElementById("errors");
    verdict.errors.forEach(function (e) { errs.appendChild(h("pre", {text: e.route + ": " + e.text})); });
  }

  /* -- the program --------------------------------------------------------------------- */
  function buildSource() {
    var program = DATA.source, pre = document.getElementById("source");
    if (program.note) { var note = document.getElementById("source-note"); note.hidden = false; note.textContent = program.note; }
    var lines = program.text.replace(/\n$/, "").split("\n"), byLine = {};
    program.spans.forEach(function (s) { (byLine[s[0]] = byLine[s[0]] || []).push({col: s[1], len: s[2], rows: s[3]}); });
    lines.forEach(function (text, k) {
      var line = h("div", {cls: "line"}, [h("span", {cls: "ln", text: String(k + 1)})]);
      nest(line, text, 0, text.length, byLine[k + 1] || []);
      pre.appendChild(line);
    });
  }
  /* Spans are nested stretches of a line (an expression and its operands). */
  function nest(parent, text, start, end, spans) {
    var pos = start, i = 0;
    while (i < spans.length) {
      var s = spans[i];
      if (s.col < pos || s.col + s.len > end) { i++; continue; }
      var inner = [], j = i + 1;
      while (j < spans.length && spans[j].col < s.col + s.len) { inner.push(spans[j]); j++; }
      parent.appendChild(document.createTextNode(text.slice(pos, s.col)));
      var el = h("span", {cls: "sp", "data-rows": s.rows.join(" "), title: s.rows.map(function (r) { return rowTitle(rows[r]); }).join("\n")});
      el.addEventListener("click", spanClick);
      s.rows.forEach(function (r) { (spanEls[r] = spanEls[r] || []).push(el); });
      nest(el, text, s.col, s.col + s.len, inner);
      parent.appendChild(el);
      pos = s.col + s.len; i = j;
    }
    parent.appendChild(document.createTextNode(text.slice(pos, end)));
  }
  function spanClick(e) {
    e.stopPropagation();
    var list = e.currentTarget.getAttribute("data-rows").split(" ").map(Number);
    var at = list.indexOf(state.sel);
    select(list[at >= 0 ? (at + 1) % list.length : 0]);
  }

  /* -- the snoc list ------------------------------------------------------------------- */
  function keyText(r) {
    if (r.key) return r.key;
    if (r.kind === "input") return "input " + r.name;
    if (r.kind === "frontier" || r.kind === "index" || r.kind === "carry") return r.kind + " " + r.name;
    return "(" + r.label + ")";
  }
  /* The key, breakable after each "/" (a <wbr>, so a copied key has no extra characters). */
  function keyCell(r) {
    var text = keyText(r), td = h("td", {cls: "c-key", title: text + (r.where ? "\n" + r.where : "")});
    text.split("/").forEach(function (part, k, all) {
      td.appendChild(document.createTextNode(part + (k < all.length - 1 ? "/" : "")));
      if (k < all.length - 1) td.appendChild(document.createElement("wbr"));
    });
    return td;
  }
  function opCell(r) {
    var td = h("td", {cls: "c-op"});
    if (r.kind === "frontier") { td.appendChild(document.createTextNode("= outer ")); td.appendChild(slotLink(r.origin, slotName(rows[r.origin]))); }
    else if (r.kind === "carry") {
      td.appendChild(document.createTextNode("starts as ")); td.appendChild(slotLink(r.origin, slotName(rows[r.origin])));
      if (r.feedback !== undefined) { td.appendChild(document.createTextNode(", then ")); td.appendChild(slotLink(r.feedback, slotName(rows[r.feedback]))); }
    } else if (r.kind === "index") {
      var ext = loops[r.body].extent;
      td.textContent = "0 \u2026 " + (/^\d+$/.test(ext) ? String(Number(ext) - 1) : ext + " \u2212 1");
    }
    else if (r.kind === "input") td.textContent = "";
    else td.textContent = r.op;
    td.title = td.textContent;
    return td;
  }
  function buildRows() {
    var tbody = document.querySelector("#rows tbody"), foots = {};
    Object.keys(loops).map(Number).sort(function (a, b) { return b - a; }).forEach(function (L) {
      var last = loops[L].rows.length ? loops[L].rows[loops[L].rows.length - 1] : L;
      (foots[last] = foots[last] || []).push(L);
    });
    rows.forEach(function (r) {
      var mark = h("td", {cls: "c-mark"}), ok = h("td", {cls: "c-ok"});
      var reads = h("td", {cls: "c-reads"});
      r.reads.forEach(function (rd, k) { if (k) reads.appendChild(document.createTextNode(" ")); reads.appendChild(slotLink(rd[2], rd[1])); });
      if (!r.reads.length) reads.textContent = "-";
      var type = h("td", {cls: "c-type", text: r.type, title: r.declared ? r.type + " (declared " + r.declared + " in its callee's dims)" : r.type});
      var frees = h("td", {cls: "c-frees", text: r.frees.join(" ") || "-", title: r.frees.length ? "released after this slot: " + r.frees.join(" ") : "frees nothing"});
      var tr = h("tr", {cls: "row " + r.kind + (r.loops.length ? " inbody" : ""), id: "row-" + r.i, "data-row": r.i, "aria-selected": "false"},
        [mark, ok, h("td", {cls: "c-slot", text: slotName(r)}), keyCell(r), opCell(r), reads, type, frees]);
      tr.style.setProperty("--depth", r.loops.length);
      tr.addEventListener("click", function () { select(r.i); });
      rowEls[r.i] = tr; okEls[r.i] = ok; markEls[r.i] = mark;
      tbody.appendChild(tr);
      if (r.kind === "loop" && loops[r.i]) tbody.appendChild(bodyHead(r));
      (foots[r.i] || []).forEach(function (L) { tbody.appendChild(bodyFoot(rows[L])); });
    });
  }
  function bodyHead(r) {
    var L = r.i, toggle = h("button", {type: "button", cls: "toggle", "aria-expanded": "false", text: "\u25b8 open"});
    toggle.addEventListener("click", function (e) { e.stopPropagation(); state.open[L] = !state.open[L]; refreshVisibility(); drawArrows(); });
    var slider = h("input", {type: "range", min: "0", max: "0", step: "1", value: "0", id: "iter-" + L, "aria-label": "iteration of the loop at " + slotName(r)});
    var out = h("output", {"for": "iter-" + L});
    slider.addEventListener("input", function () { setIteration(L, Number(slider.value)); });
    sliders[L] = {input: slider, output: out, toggle: toggle};
    var td = h("td", {colspan: "8"}, [toggle, "body of " + slotName(r) + " grid(" + loops[L].extent + "), run once per iteration; its slots are " + slotName(r) + ".0, " + slotName(r) + ".1, \u2026",
      h("span", {cls: "iter"}, ["iteration", slider, out])]);
    var tr = h("tr", {cls: "bodyhead", "data-loop": L}, [td]);
    tr.style.setProperty("--depth", r.loops.length);
    return tr;
  }
  function bodyFoot(r) {
    var L = r.i, td = h("td", {colspan: "8"}, ["body outputs: "]);
    loops[L].outputs.forEach(function (o, k) { if (k) td.appendChild(document.createTextNode(" ")); td.appendChild(slotLink(o, slotName(rows[o]))); });
    td.appendChild(document.createTextNode(loops[L].carries.length ? " \u2014 the next iteration's carries; after the last iteration, the value of " + slotName(r) : " \u2014 the last iteration's are the value of " + slotName(r)));
    var tr = h("tr", {cls: "bodyfoot", "data-loop": L}, [td]);
    tr.style.setProperty("--depth", r.loops.length + 1);
    return tr;
  }
  function isShown(r) { return r.loops.every(function (L) { return state.open[L]; }); }
  function refreshVisibility() {
    rows.forEach(function (r) { rowEls[r.i].hidden = !isShown(r); });
    document.querySelectorAll("#rows tr.bodyhead, #rows tr.bodyfoot").forEach(function (tr) {
      var L = Number(tr.getAttribute("data-loop"));
      tr.hidden = !isShown(rows[L]) || (tr.className === "bodyfoot" && !state.open[L]);
    });
    Object.keys(sliders).forEach(function (L) {
      var s = sliders[L], open = !!state.open[L];
      s.toggle.textContent = open ? "\u25be close" : "\u25b8 open";
      s.toggle.setAttribute("aria-expanded", String(open));
    });
  }
  function refreshSliders() {
    Object.keys(sliders).forEach(function (key) {
      var L = Number(key), s = sliders[L], n = countOf(L), shown = Math.min(n, DATA.max_iterations);
      s.input.max = String(Math.max(shown - 1, 0));
      s.input.disabled = n === 0;
      s.input.value = String(iterOf(L));
      s.output.textContent = n === 0 ? "the loop ran 0 times" : iterLabel(L, n, shown);
    });
    rows.forEach(function (r) {
      var m = routeMark(r);
      okEls[r.i].textContent = m[0]; okEls[r.i].className = "c-ok " + m[1]; okEls[r.i].title = m[2];
    });
  }
  function iterLabel(L, n, shown) {
    return iterOf(L) + " (of 0\u2026" + (n - 1) + (n > shown ? "; the first " + shown + " are recorded" : "") + ")";
  }
  function applyIterations(iters) { Object.keys(iters || {}).forEach(function (L) { state.iters[L] = iters[L]; }); }
  function setIteration(L, i) {
    state.iters[L] = i;
    refreshSliders();
    if (state.sel !== null) renderValue(rows[state.sel]);
  }

  /* -- selection ----------------------------------------------------------------------- */
  function select(i) {
    if (i === null || i === undefined || !rows[i]) return;
    var r = rows[i];
    r.loops.forEach(function (L) { state.open[L] = true; });
    if (r.kind === "loop") state.open[i] = true;
    state.sel = i;
    rows.forEach(function (o) {
      var el = rowEls[o.i], isSel = o.i === i;
      var read = r.reads.some(function (rd) { return rd[2] === o.i; }) || (r.origin === o.i) || (r.feedback === o.i);
      var reader = readers[i].indexOf(o.i) >= 0;
      el.classList.toggle("sel", isSel); el.classList.toggle("read", !isSel && read); el.classList.toggle("reader", !isSel && reader);
      el.setAttribute("aria-selected", String(isSel));
      markEls[o.i].textContent = isSel ? "\u25b6" : read ? "\u2190" : reader ? "\u2192" : "";
    });
    document.querySelectorAll(".sp.sel").forEach(function (el) { el.classList.remove("sel"); });
    var own = spanEls[i] || (r.kind === "frontier" ? spanEls[r.origin] : null) || [];
    own.forEach(function (el) { el.classList.add("sel"); });
    refreshVisibility();
    refreshSliders();
    document.getElementById("rows").setAttribute("aria-activedescendant", "row-" + i);
    reveal(rowEls[i], document.getElementById("lowered"));
    if (own.length) reveal(own[0], document.getElementById("program"));
    renderValue(r);
    drawArrows();
  }
  /* Scroll ``pane`` (vertically only) so that ``el`` is in view below its sticky heading. */
  function reveal(el, pane) {
    var p = pane.getBoundingClientRect(), b = el.getBoundingClientRect(), top = p.top + 60;
    if (b.top < top) pane.scrollTop -= top - b.top;
    else if (b.bottom > p.bottom - 8) pane.scrollTop += b.bottom - p.bottom + 8 + Math.min(80, p.height / 4);
  }
  function move(d) {
    var next = state.sel === null ? 0 : Math.max(0, Math.min(rows.length - 1, state.sel + d));
    select(next);
  }
  function innermostLoop(r) { return r.kind === "loop" ? r.i : (r.loops.length ? r.loops[r.loops.length - 1] : null); }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (t && t.tagName === "INPUT") return;  /* a slider keeps its own arrow keys */
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var k = e.key;
    if (k === "ArrowDown" || k === "ArrowRight") move(1);
    else if (k === "ArrowUp" || k === "ArrowLeft") move(-1);
    else if (k === "Home") select(0);
    else if (k === "End") select(rows.length - 1);
    else if ((k === "[" || k === "]") && state.sel !== null) {
      var L = innermostLoop(rows[state.sel]);
      if (L === null) return;
      setIteration(L, Math.max(0, Math.min(Number(sliders[L].input.max), iterOf(L) + (k === "]" ? 1 : -1))));
    } else return;
    e.preventDefault();
  });

  /* -- arrows: a node points only backwards ---------------------------------------------- */
  function drawArrows() {
    var svg = document.getElementById("arrows"), wrap = document.getElementById("rows-wrap");
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.style.height = wrap.offsetHeight + "px";
    if (state.sel === null) return;
    var r = rows[state.sel];
    var ns = "http://www.w3.org/2000/svg", base = wrap.getBoundingClientRect().top;
    var defs = document.createElementNS(ns, "defs");
    ["plain", "next"].forEach(function (id) {
      var m = document.createElementNS(ns, "marker");
      m.setAttribute("id", "head-" + id); m.setAttribute("viewBox", "0 0 8 8"); m.setAttribute("refX", "7"); m.setAttribute("refY", "4");
      m.setAttribute("markerWidth", "7"); m.setAttribute("markerHeight", "7"); m.setAttribute("orient", "auto");
      var p = document.createElementNS(ns, "path"); p.setAttribute("d", "M0,0 L8,4 L0,8 z");
      p.setAttribute("style", "fill:" + (id === "next" ? "#7a3d00" : "#1f4e99") + ";stroke:none");
      m.appendChild(p); defs.appendChild(m);
    });
    svg.appendChild(defs);
    function mid(i) { var b = rowEls[i].getBoundingClientRect(); return b.top - base + b.height / 2; }
    function arrow(to, cls, label) {
      if (!rowEls[to] || rowEls[to].hidden || rowEls[state.sel].hidden) return;
      var y1 = mid(state.sel), y2 = mid(to), w = Math.min(26, 8 + Math.abs(y2 - y1) / 14);
      var p = document.createElementNS(ns, "path");
      p.setAttribute("d", "M30," + y1 + " C" + (30 - w) + "," + y1 + " " + (30 - w) + "," + y2 + " 29," + y2);
      p.setAttribute("class", cls); p.setAttribute("marker-end", "url(#head-" + (cls === "next" ? "next" : "plain") + ")");
      p.setAttribute("data-to", String(to));
      svg.appendChild(p);
      if (label) {
        var t = document.createElementNS(ns, "text"); t.setAttribute("x", "1"); t.setAttribute("y", String((y1 + y2) / 2 + 3));
        t.textContent = label; svg.appendChild(t);
      }
    }
    r.reads.forEach(function (rd) { arrow(rd[2], "read"); });
    if (r.kind === "frontier") arrow(r.origin, "outer");
    if (r.kind === "carry") { arrow(r.origin, "outer"); if (r.feedback !== undefined) arrow(r.feedback, "next", "next"); }
  }
  window.addEventListener("resize", drawArrows);

  /* -- the value pane ------------------------------------------------------------------ */
  function kindNote(r) {
    switch (r.kind) {
      case "input": return "an input of the function: its value is bound from the arguments";
      case "frontier": return "a frontier value: computed before the loop, passed to each iteration";
      case "index": return "the loop index: 0 in the first iteration, then 1, 2, \u2026";
      case "carry": return "a carry: the loop passes it from one iteration to the next";
      case "weight": return "a module weight, read from the loaded module";
      case "constant": return "a constant, made on the run's device" + (r.literal !== undefined ? ": " + r.literal : "");
      case "call": return "a call boundary: its slot holds the arguments, checked against the callee's parameters; the value shown is the call's value (its callee's result)";
      case "loop": return "a loop: its body (under it in the list) runs once per iteration; its value is the final carries";
      case "error": return "a node the lowering knows will raise here";
      default: return "";
    }
  }
  function renderValue(r) {
    var body = document.getElementById("value-body");
    while (body.firstChild) body.removeChild(body.firstChild);
    body.appendChild(h("h3", {id: "value-title", text: slotName(r) + "  " + r.label}));
    if (r.where) body.appendChild(h("div", {cls: "where", text: r.where}));
    var facts = h("div", {cls: "facts"});
    facts.appendChild(h("div", {text: kindNote(r)}));
    var where = resolve(r);
    if (where.key && where.key.indexOf("slot:") !== 0) facts.appendChild(h("div", {}, ["key ", h("code", {id: "value-key", text: where.key})]));
    if (r.loops.length) {
      var L = r.loops[r.loops.length - 1], n = countOf(L);
      var mirror = h("input", {type: "range", min: "0", max: String(Math.max(Math.min(n, DATA.max_iterations) - 1, 0)), step: "1", value: String(iterOf(L)), id: "value-iter", "aria-label": "iteration of the loop at " + slotName(rows[L])});
      mirror.disabled = n === 0;
      mirror.addEventListener("input", function () { setIteration(L, Number(mirror.value)); });
      facts.appendChild(h("div", {}, ["in the body of " + slotName(rows[L]) + ", iteration ", mirror,
        h("output", {id: "value-iter-text", text: " " + (n ? iterLabel(L, n, Math.min(n, DATA.max_iterations)) : "(the loop ran 0 times)")})]));
    }
    if (where.note) facts.appendChild(h("div", {text: "now: " + where.note}));
    var readsDiv = h("div", {}, ["reads: "]);
    r.reads.forEach(function (rd, k) { if (k) readsDiv.appendChild(document.createTextNode(" ")); readsDiv.appendChild(slotLink(rd[2], rd[1])); });
    if (!r.reads.length) readsDiv.appendChild(document.createTextNode("nothing"));
    readsDiv.appendChild(document.createTextNode(" \u00b7 read by: "));
    readers[r.i].forEach(function (o, k) { if (k) readsDiv.appendChild(document.createTextNode(" ")); readsDiv.appendChild(slotLink(o, slotName(rows[o]))); });
    if (!readers[r.i].length) readsDiv.appendChild(document.createTextNode(DATA.outputs && DATA.outputs.indexOf(r.i) >= 0 ? "the output" : "nothing"));
    facts.appendChild(readsDiv);
    facts.appendChild(h("div", {text: "type " + r.type + (r.declared ? " (declared " + r.declared + " in the callee's dims)" : "")}));
    body.appendChild(facts);
    if (atFailure(r)) verdict.errors.forEach(function (e) { body.appendChild(h("div", {cls: "verdict-line err", text: "failed here \u2014 " + e.route + ": " + e.text})); });
    if (where.index !== undefined) {
      body.appendChild(h("div", {cls: "scalar", id: "value-scalar", text: "index = " + where.index}));
      return;
    }
    var rec = where.key !== undefined ? values[where.key] : undefined;
    if (!rec && atFailure(r)) return;  /* it raised: the error above is its value */
    if (!rec) {
      var never = r.loops.some(function (L) { return countOf(L) === 0; });
      var why = never ? "the loop ran 0 times, so its body computed nothing" : where.key === undefined ? "this slot has no node key, so neither table records it per iteration" :
        verdict.errors.length ? "not recorded: a route raised before reaching this node" : "not recorded (an iteration past the first " + DATA.max_iterations + ")";
      body.appendChild(h("div", {cls: "verdict-line one", text: why}));
      return;
    }
    if (rec.eq) {
      body.appendChild(h("div", {cls: "verdict-line eq", id: "value-verdict", text: "bitwise equal on both routes"}));
      body.appendChild(drawValue(rec.v));
    } else if (rec.diff) {
      var d = rec.diff, text = "the routes differ: " + d.reason;
      if (d.max_abs !== undefined) text += "; max |\u0394| " + fmt(d.max_abs);
      if (d.first) text += "; first at [" + d.first.join(", ") + "]: " + d.first_values[0] + " (direct) vs " + d.first_values[1] + " (lowered)";
      body.appendChild(h("div", {cls: "verdict-line ne", id: "value-verdict", text: text}));
      body.appendChild(h("div", {cls: "route"}, [h("h4", {text: "direct route (visitor)"}), drawValue(rec.d)]));
      body.appendChild(h("div", {cls: "route"}, [h("h4", {text: "lowered route (snoc list)"}), drawValue(rec.l)]));
    } else {
      var only = rec.slot ? "lowered route only: this slot has no node key, so the direct route's table does not hold it" :
        rec.d ? "direct route only: the lowered route raised before this node" : "lowered route only: the direct route raised before this node";
      body.appendChild(h("div", {cls: "verdict-line one", id: "value-verdict", text: only}));
      body.appendChild(drawValue(rec.d || rec.l));
    }
  }
  /* -- start ----------------------------------------------------------------------------- */
  buildHeader();
  buildSource();
  buildRows();
  refreshVisibility();
  applyIterations(verdict.iterations);
  var first = rows.findIndex(function (r) { return r.kind !== "input"; });
  if (verdict.row !== null && verdict.row !== undefined) select(verdict.row);
  else if (rows.length) select(first >= 0 ? first : 0);
  else document.getElementById("value-body").textContent = verdict.errors.length ? "The program has no lowered nodes: see the error above." : "The program has no nodes.";
  window.tfexecExplorer = {state: state, rows: rows, select: select, setIteration: setIteration};
})();
