/* mongobench report: draws the charts described by #report-data with uPlot.
   Sets data-charts-rendered on <body> to the number of charts drawn; errors
   go to #js-errors (see the recorder in <head>). */
(function () {
  "use strict";

  var HEIGHT = 280;

  function fail(text) {
    if (window.reportError) { window.reportError(text); }
  }

  function trim(v, digits) {
    return String(Number(v.toFixed(digits)));
  }

  function group(v) {
    return v.toLocaleString("en-US", { maximumFractionDigits: 2 });
  }

  function micros(v) {
    var a = Math.abs(v);
    if (a === 0) { return "0"; }
    if (a >= 1e6) { return trim(v / 1e6, 2) + "s"; }
    if (a >= 1e3) { return trim(v / 1e3, 2) + "ms"; }
    return trim(v, 1) + "µs";
  }

  function compact(v) {
    var a = Math.abs(v);
    if (a >= 1e9) { return trim(v / 1e9, 2) + "G"; }
    if (a >= 1e6) { return trim(v / 1e6, 2) + "M"; }
    if (a >= 1e4) { return trim(v / 1e3, 1) + "k"; }
    return trim(v, 2);
  }

  function bytes(v) {
    var a = Math.abs(v);
    if (a >= 1073741824) { return trim(v / 1073741824, 2) + " GiB"; }
    if (a >= 1048576) { return trim(v / 1048576, 2) + " MiB"; }
    if (a >= 1024) { return trim(v / 1024, 1) + " KiB"; }
    return trim(v, 0) + " B";
  }

  /* Tick labels (short) and legend values (precise) per unit. */
  var units = {
    us: { tick: micros, value: micros },
    rate: { tick: function (v) { return compact(v) + "/s"; }, value: function (v) { return group(v) + "/s"; } },
    count: { tick: compact, value: group },
    bytes: { tick: bytes, value: bytes },
    bytes_rate: { tick: function (v) { return bytes(v) + "/s"; }, value: function (v) { return bytes(v) + "/s"; } },
    s: { tick: function (v) { return trim(v, 2) + "s"; }, value: function (v) { return trim(v, 3) + " s"; } },
    nines: { tick: nines, value: nines }
  };

  /* A percentile spectrum's x is log10(1/(1-q)): 1 is 90%, 2 is 99%. */
  function nines(x) {
    var q = 100 * (1 - Math.pow(10, -x));
    return trim(q, Math.max(0, Math.ceil(x) - 1)) + "%";
  }

  /* Ticks at 50%, 90%, 99%, 99.9%, ... up to the axis's end. */
  function ninesSplits(u, axisIdx, min, max) {
    var out = [Math.log10(2)];
    for (var k = 1; k <= max + 1e-9; k++) { out.push(k); }
    return out;
  }

  function unit(name) { return units[name] || units.count; }

  /* Byte axes step by powers of two, so that ticks read 64 MiB, 128 MiB. */
  var binaryIncrs = [];
  for (var k = 0; k < 60; k++) { binaryIncrs.push(Math.pow(2, k)); }

  /* Room for the longest tick label of an axis. */
  function axisSize(u, values) {
    var longest = 0;
    (values || []).forEach(function (v) { longest = Math.max(longest, String(v).length); });
    return Math.max(40, Math.ceil(longest * 8) + 22);
  }

  function axis(scale, label, u, side) {
    var a = {
      scale: scale,
      label: label,
      labelSize: 18,
      size: axisSize,
      values: function (self, v) { return v.map(function (x) { return x == null ? "" : u.tick(x); }); }
    };
    if (u === units.bytes || u === units.bytes_rate) { a.incrs = binaryIncrs; }
    if (side) { a.side = side; a.grid = { show: false }; }
    return a;
  }

  function dashOf(name) {
    if (name === "dash") { return [7, 4]; }
    if (name === "dot") { return [2, 3]; }
    return undefined;
  }

  /* Linear axes start at zero: benchmarks are compared by size. */
  function fromZero(u, min, max) {
    if (max == null || !isFinite(max) || max <= 0) { return [0, 1]; }
    return [0, uPlot.rangeNum(0, max, 0.1, true)[1]];
  }

  function options(c, width, log) {
    var xu = unit(c.x_unit), yu = unit(c.y_unit), y2u = unit(c.y2_unit);
    var hasY2 = c.series.some(function (s) { return s.axis === 2; });

    var scales = { x: { time: false }, y: log ? { distr: 3, log: 10 } : { range: fromZero } };
    if (c.kind === "spectrum") { scales.x.range = function (u, min, max) { return [0, Math.max(max, 1)]; }; }
    if (hasY2) { scales.y2 = { range: fromZero }; }

    var x = axis("x", c.x_label, xu);
    delete x.size;
    if (c.kind === "spectrum") { x.splits = ninesSplits; }
    var axes = [x, axis("y", c.y_label, yu)];
    if (log) { delete axes[1].incrs; }
    if (hasY2) { axes.push(axis("y2", c.y2_label, y2u, 1)); }

    var series = [{ label: c.x_name || c.x_label, value: function (u, v) { return v == null ? "–" : xu.value(v); } }];
    c.series.forEach(function (s) {
      var fmt = s.axis === 2 ? y2u : yu;
      series.push({
        label: s.label,
        stroke: s.color,
        width: s.width || 1.75,
        dash: dashOf(s.dash),
        scale: s.axis === 2 ? "y2" : "y",
        spanGaps: !!c.span_gaps,
        points: c.points ? { show: true, size: 6, fill: s.color } : { show: false },
        value: function (u, v) { return v == null ? "–" : fmt.value(v); }
      });
    });

    return {
      width: width,
      height: HEIGHT,
      scales: scales,
      axes: axes,
      series: series,
      cursor: c.sync ? { drag: { x: true, y: false }, sync: { key: c.sync } } : { drag: { x: true, y: false } },
      legend: { live: true }
    };
  }

  function widthOf(el) {
    var w = el.clientWidth;
    return w > 0 ? w : 600;
  }

  var plots = {};

  var BAR_ROW = 34;

  /* A horizontal bar chart drawn on a canvas of its own: one bar per
     variant, target or file, its 95% confidence interval as a whisker and
     its verdict to the right. */
  function drawBars(c, el) {
    var u = unit(c.y_unit);
    var bars = c.bars || [];
    var width = widthOf(el);
    var labelW = 0, textW = 0;
    var dpr = window.devicePixelRatio || 1;
    var canvas = document.createElement("canvas");
    var ctx = canvas.getContext("2d");
    var font = '13px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
    ctx.font = font;
    bars.forEach(function (b) {
      labelW = Math.max(labelW, ctx.measureText(b.label).width);
      textW = Math.max(textW, ctx.measureText((b.text || "") + "  000.00ms").width);
    });
    labelW = Math.min(Math.ceil(labelW) + 12, width * 0.3);
    textW = Math.min(Math.ceil(textW) + 16, width * 0.4);
    var top = 8, axisH = 34;
    var height = top + bars.length * BAR_ROW + axisH;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    ctx.scale(dpr, dpr);
    ctx.font = font;

    var hi = 0;
    bars.forEach(function (b) {
      [b.value, b.hi].forEach(function (v) { if (v != null && isFinite(v)) { hi = Math.max(hi, v); } });
    });
    if (hi <= 0) { hi = 1; }
    /* Four ticks at a round step (1, 2, 2.5 or 5 × a power of ten). */
    var raw = hi * 1.05 / 4, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).filter(function (v) { return v >= raw; })[0];
    var incr = step * 4;
    var x0 = labelW, x1 = width - textW - 8;
    function px(v) { return x0 + (x1 - x0) * Math.min(v, incr) / incr; }

    /* Grid and axis ticks. */
    ctx.strokeStyle = "#e5e7eb";
    ctx.fillStyle = "#6b7280";
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (var k = 0; k <= 4; k++) {
      var v = incr * k / 4, gx = px(v);
      ctx.beginPath(); ctx.moveTo(gx, top); ctx.lineTo(gx, top + bars.length * BAR_ROW); ctx.stroke();
      ctx.fillText(u.tick(v), gx, top + bars.length * BAR_ROW + 4);
    }
    ctx.fillText(c.y_label || "", (x0 + x1) / 2, top + bars.length * BAR_ROW + 19);

    bars.forEach(function (b, i) {
      var y = top + i * BAR_ROW, mid = y + BAR_ROW / 2;
      ctx.textBaseline = "middle";
      ctx.textAlign = "right";
      ctx.fillStyle = "#1f2937";
      ctx.fillText(b.label, x0 - 8, mid, labelW - 10);
      if (b.value != null) {
        ctx.fillStyle = b.color;
        ctx.globalAlpha = b.kind === "inconclusive" ? 0.35 : 0.8;
        ctx.fillRect(x0, y + 7, Math.max(1, px(b.value) - x0), BAR_ROW - 14);
        ctx.globalAlpha = 1;
      }
      if (b.lo != null && b.hi != null) {
        var a = px(b.lo), z = px(b.hi);
        ctx.strokeStyle = "#111827";
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        ctx.moveTo(a, mid); ctx.lineTo(z, mid);
        ctx.moveTo(a, mid - 6); ctx.lineTo(a, mid + 6);
        ctx.moveTo(z, mid - 6); ctx.lineTo(z, mid + 6);
        ctx.stroke();
        ctx.lineWidth = 1;
      }
      /* The value and verdict just right of the bar and its whisker. */
      var end = x0;
      [b.value, b.hi].forEach(function (v) { if (v != null && isFinite(v)) { end = Math.max(end, px(v)); } });
      ctx.textAlign = "left";
      ctx.fillStyle = b.kind === "difference" ? "#b91c1c" : (b.kind === "reference" ? "#15803d" : "#374151");
      var label = (b.value != null ? u.value(b.value) + "  " : "") + (b.text || "");
      ctx.fillText(label, end + 10, mid, width - end - 12);
    });

    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", c.title || c.id);
    el.appendChild(canvas);
    return { el: el, destroy: function () {}, redraw: function () { draw(c, false); } };
  }

  function draw(c, log) {
    var el = document.getElementById(c.id);
    if (!el) { fail("no element for chart " + c.id); return false; }
    if (plots[c.id]) { plots[c.id].destroy(); delete plots[c.id]; }
    el.textContent = "";
    if (c.kind === "bars") {
      if (!c.bars || c.bars.length === 0) { el.innerHTML = '<div class="chart-missing">No data to plot.</div>'; return false; }
      plots[c.id] = drawBars(c, el);
      return true;
    }
    if (!c.x || c.x.length === 0) {
      el.innerHTML = '<div class="chart-missing">No data to plot.</div>';
      return false;
    }
    var data = [c.x].concat(c.series.map(function (s) { return s.values; }));
    plots[c.id] = { plot: new uPlot(options(c, widthOf(el), log), data, el), el: el, destroy: function () { this.plot.destroy(); } };
    return true;
  }

  function main() {
    if (typeof uPlot === "undefined") { fail("the chart library did not load"); return; }

    var node = document.getElementById("report-data");
    if (!node) { fail("no chart data in the page"); return; }
    var charts = JSON.parse(node.textContent).charts || [];

    var drawn = 0;
    var byID = {};
    charts.forEach(function (c) {
      byID[c.id] = c;
      try {
        if (draw(c, !!c.y_log)) { drawn++; }
      } catch (e) {
        fail("chart " + c.id + ": " + (e && e.message ? e.message : e));
      }
    });

    Array.prototype.forEach.call(document.querySelectorAll("input[data-log-for]"), function (box) {
      box.addEventListener("change", function () {
        var c = byID[box.getAttribute("data-log-for")];
        if (!c) { return; }
        try { draw(c, box.checked); } catch (e) { fail("chart " + c.id + ": " + e.message); }
      });
    });

    var pending = 0;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        Object.keys(plots).forEach(function (id) {
          var p = plots[id];
          if (p.redraw) { p.redraw(); return; }
          p.plot.setSize({ width: widthOf(p.el), height: HEIGHT });
        });
      }, 100);
    });

    document.body.setAttribute("data-charts-rendered", String(drawn));
    document.body.setAttribute("data-charts-total", String(charts.length));
  }

  try {
    main();
  } catch (e) {
    fail("drawing the charts: " + (e && e.message ? e.message : e));
  }
})();
