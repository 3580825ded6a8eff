/* tomacs view: renders the page's JSON blob (tomacs/view). No network: plotly is inlined above.
 * Routes (location.hash): "" home, "#g/<group>" a run or transcript source, "#g/<group>/e/<episode>". */
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("tomacs-view-data").textContent);
  const app = document.getElementById("app");
  const append = (...kids) => kids.forEach((k) => k && app.appendChild(k));
  const ROLE_COLOUR = { honest: "#2b83ba", dormant: "#fdae61", adversary: "#d7191c" };
  const ROLE_NAME = { honest: "honest", dormant: "adversary before its onset", adversary: "adversary from its onset" };
  const MARK_SYMBOL = { right: "circle", wrong: "square", target: "diamond", unparsed: "x", absent: "circle-open" };
  const MARK_GLYPH = { right: "●", wrong: "■", target: "◆", unparsed: "✕", absent: "○" };
  const MARK_NAME = { right: "right", wrong: "wrong", target: "the adversary's target", unparsed: "unparsed", absent: "no turn (carried forward)" };
  const PLOT_CONFIG = { displayModeBar: false, responsive: true };
  const filters = {}; // per group: the episode list's filter state, kept across navigation

  // ---------------------------------------------------------------- small DOM helpers
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  const fmt = (v, digits) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits === undefined ? 2 : digits));
  const ans = (a) => (a === null || a === undefined ? "∅" : String(a));
  function table(head, rows, cls) {
    return h("table", { class: cls || "grid" },
      h("thead", {}, h("tr", {}, head.map((x) => h("th", {}, x)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c) => h("td", {}, c))))));
  }
  function kv(pairs) {
    return h("table", { class: "kv" }, h("tbody", {}, pairs.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v)))));
  }
  const section = (title, ...kids) => h("section", {}, h("h2", {}, title), ...kids);
  function markSpan(mark, text) {
    return h("span", { class: "mark mark-" + mark, title: MARK_NAME[mark] || mark }, MARK_GLYPH[mark] || "", " ", text);
  }

  // ---------------------------------------------------------------- header and routing
  function header(crumbs) {
    return h("header", {},
      h("h1", {}, h("a", { href: "#" }, DATA.title)),
      h("div", { class: "sub" }, `${DATA.path} · ${DATA.kind} · built ${DATA.generated} · `, h("span", { id: "sampling" }, DATA.sampling.text)),
      crumbs && crumbs.length ? h("nav", {}, crumbs.map((c, i) => [i ? " › " : "", c.href ? h("a", { href: c.href }, c.text) : c.text])) : null);
  }
  function route() {
    const m = location.hash.match(/^#g\/(\d+)(?:\/e\/(\d+))?/);
    app.replaceChildren();
    window.scrollTo(0, 0);
    if (!m) return home();
    const g = DATA.groups[+m[1]];
    if (!g) return home();
    if (m[2] !== undefined && g.episodes[+m[2]]) return episodePage(+m[1], +m[2]);
    return groupPage(+m[1]);
  }

  // ---------------------------------------------------------------- home: the sweep's table of runs
  function warningsBox() {
    if (!DATA.warnings.length) return null;
    return h("div", { class: "warnings" }, h("strong", {}, "WARNINGS"), h("ul", {}, DATA.warnings.map((w) => h("li", {}, w))));
  }
  function home() {
    if (DATA.groups.length === 1) return groupPage(0);
    append(header([]), warningsBox());
    const rows = DATA.groups.map((g, gi) => {
      const s = Object.fromEntries(g.settings || []);
      const m = Object.fromEntries((g.metrics || []).map((x) => [x.metric, x]));
      const cell = (k) => (m[k] ? [fmt(m[k].ours, m[k].digits), m[k].paper ? h("span", { class: "paper" }, " / " + fmt(m[k].paper.value, m[k].digits)) : null] : "—");
      if (g.kind === "transcripts") {
        const sum = Object.fromEntries(g.summary || []);
        return [h("a", { href: `#g/${gi}` }, g.label), s.model || "", s["agents N"] || "", s["rounds T"] || "",
          sum["final answer right %"] || "", sum["adversary wins %"] || "", `${g.episodes.length} of ${g.episodes_total}`];
      }
      return [h("a", { href: `#g/${gi}` }, g.label), s.method || (g.finished ? "" : "(not finished)"), s.benchmark || "", s.attack || "",
        s.budget || "", s.seed || "", s.backbone || "", s.device || "", cell("acc"), cell("token"), cell("adacc"),
        `${g.episodes.length} of ${g.episodes_total}`];
    });
    const head = DATA.kind === "transcripts"
      ? ["source", "model", "N", "T", "final right %", "adversary wins %", "debates shown"]
      : ["run", "method", "benchmark", "attack", "budget", "seed", "backbone", "device", "Acc % (/ paper)", "Token (/ paper)", "ADAcc % (/ paper)", "episodes shown"];
    append(section(DATA.kind === "transcripts" ? "Sources" : "Runs", table(head, rows, "grid runs"),
      DATA.kind === "transcripts" ? null : h("p", { class: "note" }, "paper: TodyComm, backbone gpt-4.1-nano, where tomacs report sets a paper number beside the cell (same method, benchmark, attack, no budget, the paper's N and T).")));
  }

  // ---------------------------------------------------------------- a run (or a transcript source)
  function groupPage(gi) {
    const g = DATA.groups[gi];
    append(header(DATA.groups.length > 1 ? [{ text: "all", href: "#" }, { text: g.label }] : [{ text: g.label }]));
    if (DATA.groups.length === 1) append(warningsBox());
    if (!g.finished) append(h("p", { class: "warnings" }, "This run has no results.json: it is still running or was stopped. Only its episodes are shown."));
    if (g.settings && g.settings.length) append(section("Settings", kv(g.settings)));
    if (g.summary) append(section("Over every debate of the source", kv(g.summary)));
    if (g.metrics && g.metrics.length) {
      append(section("Metrics",
        table(["metric", "ours", `paper (${g.paper_backbone})`, "paper source"], g.metrics.map((m) => [
          m.label, fmt(m.ours, m.digits),
          m.paper ? fmt(m.paper.value, m.digits) + (m.paper.std !== null && m.paper.std !== undefined ? " ± " + fmt(m.paper.std, m.digits) : "") : "—",
          m.paper ? m.paper.source || m.paper.table : "",
        ])),
        h("p", { class: "note" }, "— = the paper has no such cell (or its N/T or budget differ from this run's).")));
    }
    if (g.curves && g.curves.epoch && g.curves.epoch.length) append(curvesSection(g.curves));
    if (g.cost && g.cost.length) append(section("Cost and time", kv(g.cost)));
    append(episodeList(gi));
  }

  function curvesSection(c) {
    const x = c.epoch;
    const line = (key, name) => (c[key] ? { x, y: c[key], name, mode: "lines+markers", type: "scatter" } : null);
    const plots = [
      ["Acc / ADAcc % per epoch", [line("val_acc", "val Acc"), line("val_adacc", "val ADAcc"), line("train_acc", "train Acc (mean)")]],
      ["training loss (mean per epoch)", [line("loss", "loss")]],
      ["credit gap (honest − adversary)", [line("credit_gap", "train (mean)"), line("val_credit_gap", "val")]],
    ];
    const box = h("div", { class: "curves" });
    const sec = section("Training curves", box);
    setTimeout(() => {
      for (const [title, traces] of plots) {
        const t = traces.filter(Boolean);
        if (!t.length) continue;
        const div = h("div", { class: "curve" });
        box.append(div);
        Plotly.newPlot(div, t, {
          title: { text: title, font: { size: 13 } }, height: 290, margin: { l: 45, r: 10, t: 35, b: 80 },
          // the legend goes under the axis title ("epoch"), which it covered at y -0.3 with a 35 px margin
          xaxis: { title: { text: "epoch", standoff: 4 }, dtick: 1 },
          legend: { orientation: "h", x: 0, y: -0.32, yanchor: "top" },
        }, PLOT_CONFIG);
      }
    });
    return sec;
  }

  function episodeList(gi) {
    const g = DATA.groups[gi];
    const f = (filters[gi] = filters[gi] || { wrong: false, win: false, flip: false, round: "", agent: "" });
    const nAgents = Math.max(0, ...g.episodes.map((e) => e.n_agents));
    const nRounds = Math.max(0, ...g.episodes.map((e) => e.n_rounds));
    const body = h("tbody", {});
    const count = h("span", { class: "count" });
    function passes(e) {
      const fl = e.flags;
      if (f.wrong && !fl.wrong) return false;
      if (f.win && !fl.adversary_win) return false;
      const byRound = f.round !== "", byAgent = f.agent !== "";
      if (f.flip || byRound || byAgent) {
        return fl.flips.some(([r, a]) => (!byRound || r === +f.round) && (!byAgent || a === +f.agent));
      }
      return true;
    }
    function fill() {
      body.replaceChildren();
      let k = 0;
      g.episodes.forEach((e, ei) => {
        if (!passes(e)) return;
        k++;
        body.append(h("tr", {},
          h("td", {}, h("a", { href: `#g/${gi}/e/${ei}` }, e.id)),
          h("td", {}, e.gold), h("td", {}, e.targets.join(", ") || "—"),
          h("td", {}, markSpan(e.final.mark, ans(e.final.answer))),
          h("td", {}, [e.flags.wrong ? h("span", { class: "tag bad" }, "wrong") : null, e.flags.adversary_win ? h("span", { class: "tag win" }, "adversary wins") : null]),
          h("td", {}, e.flags.flips.map(([r, a]) => `r${r}·a${a}`).join(" "))));
      });
      count.textContent = `${k} of ${g.episodes.length} shown episodes match (the run has ${g.episodes_total})`;
    }
    const check = (key, label) => h("label", {}, h("input", { type: "checkbox", checked: f[key], onchange: (ev) => { f[key] = ev.target.checked; fill(); } }), " " + label);
    const select = (key, label, n, base) => h("label", {}, label + " ",
      h("select", { onchange: (ev) => { f[key] = ev.target.value; fill(); } },
        h("option", { value: "" }, "any"),
        Array.from({ length: n }, (_, i) => h("option", { value: String(i + base), selected: f[key] === String(i + base) }, String(i + base)))));
    fill();
    return section(`Episodes (${g.episodes.length} of ${g.episodes_total})`,
      h("div", { class: "filters" }, check("wrong", "wrong final answer"), check("win", "adversary wins (final = target)"),
        check("flip", "a flip to the target"), select("round", "flip in round", nRounds, 1), select("agent", "by agent", nAgents, 0), count),
      h("table", { class: "grid" }, h("thead", {}, h("tr", {}, ["episode", "gold", "target", "final", "flags", "flips to target (round·agent)"].map((x) => h("th", {}, x)))), body));
  }

  // ---------------------------------------------------------------- one episode
  function legend() {
    return h("div", { class: "legend" },
      Object.entries(ROLE_COLOUR).map(([k, c]) => h("span", {}, h("span", { class: "swatch", style: `background:${c}` }), " " + ROLE_NAME[k])),
      Object.keys(MARK_SYMBOL).map((k) => h("span", {}, markSpan(k, MARK_NAME[k]))),
      h("span", {}, "faded = excluded that round; → dark: a same-round message, → light: an earlier round's output; size = credit where the method has one"));
  }

  function episodePage(gi, ei) {
    const g = DATA.groups[gi], e = g.episodes[ei];
    append(header([...(DATA.groups.length > 1 ? [{ text: "all", href: "#" }] : []), { text: g.label, href: `#g/${gi}` }, { text: e.id }]));
    const nav = h("div", { class: "pager" },
      ei > 0 ? h("a", { href: `#g/${gi}/e/${ei - 1}` }, "← previous") : "", " ",
      ei + 1 < g.episodes.length ? h("a", { href: `#g/${gi}/e/${ei + 1}` }, "next →") : "");
    append(nav);
    const options = (e.options || e.letters).map((o, i) => {
      const L = e.letters[i];
      const tags = [L === e.gold ? h("span", { class: "tag ok" }, "gold") : null, e.targets.includes(L) ? h("span", { class: "tag win" }, "target") : null];
      return h("li", {}, h("b", {}, L), e.options && o !== L ? " " + o + " " : " ", tags);
    });
    append(section("Question",
      e.question ? h("p", { class: "question" }, e.question) : h("p", { class: "note" }, "(the source keeps no wording)"),
      h("ul", { class: "options" }, options),
      kv([["source", e.source || "—"], ["model", e.model || "—"], ["question id", e.question_id || e.id],
        ...Object.entries(e.meta || {}).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : String(v)])])));
    append(section("Agents", table(["agent", "role", "onset", "target", "model"],
      e.agents.map((a) => [String(a.agent), a.role, a.onset === null ? "—" : String(a.onset), a.target === null ? "—" : String(a.target), a.model || "—"]))));

    const state = { round: "", agent: "" };
    const graphs = h("div", { class: "rounds" });
    const reply = h("div", { class: "reply" }, h("p", { class: "note" }, "Click an agent in a graph to read its reply."));
    const pick = (label, n, base, key) => h("label", {}, label + " ", h("select", { onchange: (ev) => { state[key] = ev.target.value; draw(); } },
      h("option", { value: "" }, "all"), Array.from({ length: n }, (_, i) => h("option", { value: String(i + base) }, String(i + base)))));
    const fin = e.final;
    const decision = kv([
      ["final answer", markSpan(fin.mark, ans(fin.answer))], ["gold", e.gold], ["how", fin.how],
      ...(fin.voters ? [["voters", fin.voters.map((v, i) => `${v}` + (fin.weights ? ` (w=${fmt(fin.weights[i], 3)})` : "")).join(", ") || "none"]] : []),
      ...(fin.excluded ? [["excluded from the decision", fin.excluded.join(", ") || "none"]] : []),
      ["excluded per round", e.rounds.map((r) => `r${r.round}: ${r.nodes.filter((n) => n.excluded).map((n) => n.agent).join(",") || "none"}`).join(" · ")],
      ["flips to the target", e.flags.flips.map(([r, a]) => `round ${r}, agent ${a}`).join("; ") || "none"],
      ...(fin.text ? [["decision agent's reply", h("pre", {}, fin.text)]] : []),
    ]);
    append(section("Rounds", h("div", { class: "filters" }, pick("round", e.n_rounds, 1, "round"), pick("highlight agent", e.n_agents, 0, "agent")), legend(), graphs, reply));
    append(section("Decision", decision, h("div", { class: "rounds", id: "decision" })));
    append(section("All replies", transcript(e)));

    function showReply(t, i) {
      const node = e.rounds[t - 1].nodes[i];
      const text = e.texts[t - 1][i];
      reply.replaceChildren(
        h("h3", {}, `Agent ${i}, round ${t} — ${ROLE_NAME[node.role]}`),
        h("p", {}, "answer ", markSpan(node.mark, ans(node.answer)), node.credit !== undefined ? ` · credit ${fmt(node.credit, 4)}` : "", node.excluded ? " · excluded" : ""),
        h("pre", {}, text === null || text === undefined ? "(no reply: this agent made no call in this round, or the source keeps no text)" : text));
    }
    function draw() {
      graphs.replaceChildren();
      const pos = DATA.layouts[String(e.n_agents)];
      for (const r of e.rounds) {
        if (state.round !== "" && r.round !== +state.round) continue;
        const div = h("div", { class: "graph" });
        graphs.append(div);
        Plotly.newPlot(div, ...roundFigure(e, r, pos, state.agent === "" ? null : +state.agent), PLOT_CONFIG);
        div.on("plotly_click", (ev) => { const p = ev.points && ev.points[0]; if (p && p.customdata !== undefined) showReply(r.round, p.customdata); });
      }
      const dd = document.getElementById("decision");
      if (dd) { dd.replaceChildren(); const div = h("div", { class: "graph" }); dd.append(div); Plotly.newPlot(div, ...decisionFigure(e, pos), PLOT_CONFIG); }
    }
    setTimeout(draw);
  }

  function nodeTrace(e, nodes, pos, highlight) {
    const credits = nodes.map((n) => n.credit).filter((c) => c !== undefined);
    const lo = Math.min(...credits), hi = Math.max(...credits);
    const size = (n) => (n.credit === undefined || hi === lo ? 24 : 16 + 18 * (n.credit - lo) / (hi - lo));
    return {
      type: "scatter", mode: "markers+text", x: nodes.map((n) => pos[n.agent][0]), y: nodes.map((n) => pos[n.agent][1]),
      customdata: nodes.map((n) => n.agent),
      text: nodes.map((n) => `${n.agent}:${ans(n.answer)}`), textposition: "top center", textfont: { size: 11 },
      hovertext: nodes.map((n) => `agent ${n.agent} (${ROLE_NAME[n.role]})<br>answer ${ans(n.answer)}: ${MARK_NAME[n.mark]}` +
        (n.credit !== undefined ? `<br>credit ${fmt(n.credit, 4)}` : "") + (n.excluded ? "<br>excluded" : "")),
      hoverinfo: "text",
      marker: {
        color: nodes.map((n) => ROLE_COLOUR[n.role]), symbol: nodes.map((n) => MARK_SYMBOL[n.mark] || "circle"),
        size: nodes.map(size), opacity: nodes.map((n) => (n.excluded ? 0.35 : 1)),
        line: { width: nodes.map((n) => (highlight === n.agent ? 4 : 1)), color: nodes.map((n) => (highlight === n.agent ? "#000" : "#fff")) },
      },
    };
  }
  // captureevents: false, or the arrow's empty text box, which plotly puts at the arrow's tail (the source
  // node), takes that node's hover and click: a click on an agent that sent a message would show no reply
  function arrow(from, to, colour, width, label) {
    return { x: to[0], y: to[1], ax: from[0], ay: from[1], xref: "x", yref: "y", axref: "x", ayref: "y", showarrow: true,
      arrowhead: 2, arrowsize: 1, arrowwidth: width, arrowcolor: colour, standoff: 13, startstandoff: 13, text: "", hovertext: label,
      captureevents: false };
  }
  const AXIS = { visible: false, range: [-1.45, 1.45], fixedrange: true };
  function roundFigure(e, r, pos, highlight) {
    const ann = r.edges.map((ed) => {
      const on = highlight === null || ed.src === highlight || ed.dst === highlight;
      const colour = !on ? "#e5e5e5" : ed.same ? "#333" : "#8fbbd9";
      return arrow(pos[ed.src], pos[ed.dst], colour, on && highlight !== null ? 2.2 : 1.2, `${ed.src} → ${ed.dst} (read round ${ed.rounds.join(", ")})`);
    });
    const layout = { title: { text: `round ${r.round} · ${r.edges.length} edge${r.edges.length === 1 ? "" : "s"}`, font: { size: 13 } },
      width: 300, height: 300, margin: { l: 5, r: 5, t: 30, b: 5 }, xaxis: AXIS, yaxis: { ...AXIS, scaleanchor: "x" },
      showlegend: false, annotations: ann, hovermode: "closest" };
    return [[nodeTrace(e, r.nodes, pos, highlight)], layout];
  }
  function decisionFigure(e, pos) {
    const fin = e.final, last = e.rounds[e.rounds.length - 1];
    const voters = fin.voters || last.nodes.filter((n) => n.mark !== "absent").map((n) => n.agent);
    const nodes = last.nodes.map((n) => ({ ...n, excluded: !voters.includes(n.agent), credit: fin.credits ? fin.credits[n.agent] : undefined }));
    const ann = voters.map((v, i) => arrow(pos[v], [0, 0], "#555", 1.2, fin.weights ? `weight ${fmt(fin.weights[i], 3)}` : "voter"));
    const centre = { type: "scatter", mode: "markers+text", x: [0], y: [0], text: [ans(fin.answer)], textposition: "middle center",
      textfont: { color: "#fff", size: 13 }, marker: { size: 34, color: "#444", symbol: MARK_SYMBOL[fin.mark] || "circle" },
      hoverinfo: "text", hovertext: [`final ${ans(fin.answer)}: ${MARK_NAME[fin.mark]} (${fin.how})`] };
    const layout = { title: { text: `decision (T+1): ${ans(fin.answer)}`, font: { size: 13 } }, width: 300, height: 300, margin: { l: 5, r: 5, t: 30, b: 5 },
      xaxis: AXIS, yaxis: { ...AXIS, scaleanchor: "x" }, showlegend: false, annotations: ann, hovermode: "closest" };
    return [[nodeTrace(e, nodes, pos, null), centre], layout];
  }
  function transcript(e) {
    return h("div", {}, e.rounds.map((r) => h("details", {}, h("summary", {}, `round ${r.round}`),
      r.nodes.map((n) => h("div", { class: "turn" },
        h("div", {}, h("span", { class: "swatch", style: `background:${ROLE_COLOUR[n.role]}` }), ` agent ${n.agent} · `, markSpan(n.mark, ans(n.answer)),
          n.credit !== undefined ? ` · credit ${fmt(n.credit, 4)}` : "", n.excluded ? " · excluded" : ""),
        h("pre", {}, e.texts[r.round - 1][n.agent] ?? "(no reply)"))))));
  }

  window.addEventListener("hashchange", route);
  route();
})();
