/* tfexec explain: drawing one value (numbers, a heatmap or strip of its sample) and the
   small DOM helpers the page shares. Defines TfexecDraw; page.js uses it. */
var TfexecDraw = (function () {
  "use strict";
  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") el.textContent = attrs[k];
      else if (k === "cls") el.className = attrs[k];
      else el.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { el.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return el;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "\u2013";
    if (Number.isInteger(v) && Math.abs(v) < 1e7) return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(3);
    return String(Number(v.toPrecision(5)));
  }
  function drawValue(s) {
    var box = h("div", {cls: "value"});
    if (s.fields) {
      s.fields.forEach(function (f, k) { box.appendChild(h("div", {cls: "field"}, [h("h4", {text: "field " + k}), drawValue(f)])); });
      return box;
    }
    if (s.text !== undefined) { box.appendChild(h("div", {text: s.text})); return box; }
    var t = h("table", {cls: "stats"}), add = function (k, v) { t.appendChild(h("tr", {}, [h("th", {text: k}), h("td", {text: v})])); };
    add("shape", "[" + s.shape.join(", ") + "]  (" + s.n + " element" + (s.n === 1 ? "" : "s") + ")");
    add("dtype", s.dtype);
    if (s.n > 0) {
      if (s.true !== undefined) add("true", s.true + " of " + s.n);
      add("min / max", fmt(s.min) + " / " + fmt(s.max));
      add("mean", fmt(s.mean));
      add("NaN / +Inf / \u2212Inf", s.nan + " / " + s.posinf + " / " + s.neginf);
    }
    box.appendChild(t);
    if (s.scalar !== undefined || (s.scalar === null)) box.appendChild(h("div", {cls: "scalar", text: "value " + fmt(s.scalar) + (s.nan ? " (NaN)" : "")}));
    if (s.data) box.appendChild(heatmap(s));
    else if (s.n > 1 && s.scalar === undefined) box.appendChild(h("div", {cls: "sampled", text: "no sample of the data: the page keeps samples up to a size budget, spent on earlier values"}));
    return box;
  }
  function decode(b64) {
    var bin = atob(b64), buf = new DataView(new ArrayBuffer(bin.length));
    for (var i = 0; i < bin.length; i++) buf.setUint8(i, bin.charCodeAt(i));
    var out = new Float32Array(bin.length / 4);
    for (var k = 0; k < out.length; k++) out[k] = buf.getFloat32(4 * k, true);
    return out;
  }
  function colour(v, lo, hi) {
    if (Number.isNaN(v)) return [0, 0, 0];
    var diverging = lo < 0 && hi > 0, t;
    if (diverging) {
      var m = Math.max(-lo, hi); t = Math.max(-1, Math.min(1, v / m));
      var a = Math.abs(t), end = t < 0 ? [33, 102, 172] : [178, 24, 43];
      return [255 + (end[0] - 255) * a, 255 + (end[1] - 255) * a, 255 + (end[2] - 255) * a];
    }
    t = hi > lo ? Math.max(0, Math.min(1, (v - lo) / (hi - lo))) : 0.5;
    return [247 - 239 * t, 251 - 203 * t, 255 - 148 * t];
  }
  function heatmap(s) {
    var wrap = h("div", {cls: "heatwrap"}), data = decode(s.data), R = s.sample_shape[0], C = s.sample_shape[1];
    var finite = s.min !== undefined && s.min !== null, lo = finite ? s.min : 0, hi = finite ? s.max : 0;
    var cell = Math.max(3, Math.min(18, Math.floor(Math.min(320 / C, 220 / R))));
    var cv = h("canvas", {cls: "heat", width: String(C * cell), height: String(R * cell), role: "img",
      "aria-label": (s.shape.length > 1 ? "heatmap" : "strip") + " of " + R + " by " + C + " sampled values from " + fmt(lo) + " to " + fmt(hi)});
    var g = cv.getContext("2d");
    for (var i = 0; i < R; i++) for (var j = 0; j < C; j++) {
      var v = data[i * C + j], c = v === Infinity ? [103, 0, 13] : v === -Infinity ? [8, 48, 107] : colour(v, lo, hi);
      g.fillStyle = "rgb(" + Math.round(c[0]) + "," + Math.round(c[1]) + "," + Math.round(c[2]) + ")";
      g.fillRect(j * cell, i * cell, cell, cell);
      if (!Number.isFinite(v) && cell >= 5) { g.fillStyle = "#fff"; g.fillRect(j * cell + cell / 2 - 1, i * cell + cell / 2 - 1, 2, 2); }
    }
    var readout = h("div", {cls: "readout", text: "point at a cell to read its value"});
    cv.addEventListener("mousemove", function (e) {
      var b = cv.getBoundingClientRect(), j = Math.floor((e.clientX - b.left) / cell), i = Math.floor((e.clientY - b.top) / cell);
      if (i < 0 || j < 0 || i >= R || j >= C) return;
      readout.textContent = "element " + elementIndex(s, i * s.row_step, j * s.col_step) + " = " + fmt(data[i * C + j]);
    });
    wrap.appendChild(cv);
    var lc = colour(lo, lo, hi), hc = colour(hi, lo, hi), mc = lo < 0 && hi > 0 ? "#fff" : null;
    var grad = "linear-gradient(to right, rgb(" + lc.map(Math.round) + ")" + (mc ? ", " + mc : "") + ", rgb(" + hc.map(Math.round) + "))";
    var bar = h("span", {cls: "bar"}); bar.style.background = grad;
    if (finite && lo === hi) wrap.appendChild(h("div", {cls: "legend", text: "every finite element is " + fmt(lo)}));
    else if (finite) wrap.appendChild(h("div", {cls: "legend"}, ["low " + fmt(lo), bar, "high " + fmt(hi) + (mc ? " (white: 0)" : "")]));
    if (s.nan || s.posinf || s.neginf) wrap.appendChild(h("div", {cls: "legend", text: "cells with a white dot: NaN (black), +inf (dark red), \u2212inf (dark blue)"}));
    wrap.appendChild(readout);
    var note = [];
    if (s.shape.length > 2) note.push("rows: the first " + (s.shape.length - 1) + " axes flattened (" + s.shape.slice(0, -1).join("\u00d7") + " = " + s.rows + " rows)");
    if (s.row_step > 1 || s.col_step > 1) note.push("sampled: rows 1 in " + s.row_step + ", columns 1 in " + s.col_step + " of " + s.rows + "\u00d7" + s.cols);
    if (note.length) wrap.appendChild(h("div", {cls: "sampled", text: note.join("; ")}));
    return wrap;
  }
  function elementIndex(s, row, col) {
    if (s.shape.length <= 1) return "[" + col + "]";
    var idx = [col], rest = row;
    for (var a = s.shape.length - 2; a >= 0; a--) { idx.unshift(rest % s.shape[a]); rest = Math.floor(rest / s.shape[a]); }
    return "[" + idx.join(", ") + "]";
  }

  return {h: h, fmt: fmt, drawValue: drawValue};
})();
