// Data Cleaning OpenEnv: the web page. Plain JavaScript, no build step, talks only to this
// server. Every value that comes from the server (cells, model names, messages) is put into
// the page as text (textContent / text nodes), never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const AGENT_DELAY_MS = 300;

const state = {
  specs: {}, // task_id -> task from GET /tasks
  familyOf: {}, // task_id -> family name
  generated: new Set(),
  params: {}, // operation -> parameters JSON schema, from GET /schema
  selected: null,
  episode: null, // {id, taskId, maxSteps, done, columns, scores: [], key}
  offset: 0,
  limit: 25,
  agentRunning: false,
  stop: false,
  boardLoaded: false,
  lastScore: null,
  lastMessage: "",
  lastQuery: null, // the last step's query_result, if it was a query
  tableRequests: 0,
};

// ── small helpers ───────────────────────────────────────────────────────

/** An element with attributes and children; strings become text nodes, never HTML. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = String(value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  return node;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (x) => (typeof x === "number" ? x.toFixed(4) : "—");

function randomId() {
  const bytes = new Uint8Array(6);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** One JSON request to this server: {ok, status, data}; network failures become an error. */
async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    return { ok: false, status: 0, data: { detail: `network error: ${err.message}`, code: "NETWORK" } };
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  return { ok: response.ok, status: response.status, data };
}

function showError(node, result, prefix) {
  const data = result.data || {};
  const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail ?? data);
  node.replaceChildren(
    el("span", { class: "code", text: data.code || `HTTP ${result.status}` }),
    prefix ? `${prefix}: ${detail}` : detail,
  );
  node.hidden = false;
}

function clearError(node) {
  node.hidden = true;
  node.replaceChildren();
}

function log(text, kind) {
  const list = $("log");
  list.append(el("li", { class: kind, text }));
  list.scrollTop = list.scrollHeight;
}

// ── tabs ────────────────────────────────────────────────────────────────

function selectTab(tab) {
  for (const other of document.querySelectorAll('[role="tab"]')) {
    const on = other === tab;
    other.setAttribute("aria-selected", String(on));
    other.tabIndex = on ? 0 : -1;
    $(other.getAttribute("aria-controls")).hidden = !on;
  }
  if (tab.id === "tab-board" && !state.boardLoaded) loadBoard();
  history.replaceState(null, "", tab.id === "tab-board" ? "#leaderboard" : "#play");
}

function setUpTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
      next.focus();
      selectTab(next);
    });
  }
  if (location.hash === "#leaderboard") selectTab($("tab-board"));
}

// ── tasks ───────────────────────────────────────────────────────────────

async function loadTasks() {
  const [tasks, schema] = await Promise.all([api("GET", "/tasks"), api("GET", "/schema")]);
  if (!tasks.ok) {
    $("task-groups").replaceChildren(el("p", { class: "error", text: "Could not load /tasks." }));
    return;
  }
  if (schema.ok) {
    for (const variant of schema.data.action?.anyOf || []) {
      const name = variant.properties?.operation?.const;
      if (name) state.params[name] = variant.properties.parameters || { properties: {} };
    }
  }
  for (const task of tasks.data.tasks) state.specs[task.task_id] = task;
  const families = tasks.data.families || [{ name: "tasks", task_ids: Object.keys(state.specs) }];
  const groups = [];
  const select = $("reset-task");
  const submitTask = $("submit-task");
  select.replaceChildren();
  submitTask.replaceChildren();
  for (const family of families) {
    const group = el("optgroup", { label: family.name });
    const cards = el("div", { class: "task-cards" });
    for (const id of family.task_ids) {
      const task = state.specs[id];
      if (!task) continue;
      state.familyOf[id] = family.name;
      if (family.name === "generated") state.generated.add(id);
      group.append(el("option", { value: id, text: id }));
      submitTask.append(el("option", { value: id, text: id }));
      cards.append(taskCard(task));
    }
    select.append(group);
    groups.push(
      el(
        "div",
        { class: "task-group" },
        el("h3", { text: `${family.name} ${family.name === "generated" ? "families" : "tasks"}` }),
        cards,
      ),
    );
    if (family.name === "generated") fillRunFamilies(family.task_ids);
  }
  $("task-groups").replaceChildren(...groups);
  const first = state.generated.has("full_pipeline") ? "full_pipeline" : Object.keys(state.specs)[0];
  chooseTask(first, false);
}

function taskCard(task) {
  const generated = task.family === "generated";
  const level = generated ? "generated" : task.difficulty;
  // A generated family's description quotes instance train/0's card; its first words name
  // the domain ("CRM contacts export (125 rows, hard)...").
  const sample = task.description.split("Instance train/0 reads:")[1];
  const description = generated && sample
    ? `${sample.trim().split(" (")[0]}: seeded instances in train, eval and test splits, each with its own rule card.`
    : task.description;
  return el(
    "button",
    {
      type: "button",
      class: "task-card",
      "data-task": task.task_id,
      "aria-pressed": "false",
      onclick: () => chooseTask(task.task_id, true),
    },
    el("span", { class: "name", text: task.task_id }),
    el(
      "span",
      { class: "meta" },
      el("span", { class: `badge ${level}`, text: level }),
      el("span", { class: "badge", text: `${task.max_steps} steps` }),
      el("span", { class: "badge", text: `${task.operations.length} operations` }),
    ),
    el("span", { class: "desc", text: description }),
  );
}

function chooseTask(taskId, focusReset) {
  state.selected = taskId;
  $("reset-task").value = taskId;
  for (const card of document.querySelectorAll(".task-card")) {
    card.setAttribute("aria-pressed", String(card.dataset.task === taskId));
  }
  const generated = state.generated.has(taskId);
  $("split-field").hidden = !generated;
  $("difficulty-field").hidden = !generated;
  const seed = $("reset-seed");
  if (generated && seed.value === "") seed.value = "0";
  if (!generated) seed.value = "";
  seed.placeholder = generated ? "0" : "none (original order)";
  $("reset-hint").textContent = generated
    ? "A generated family: each (seed, split) is one reproducible instance with its own rule card. With a difficulty, the first seed from this one with that difficulty is used."
    : state.familyOf[taskId] === "fixed"
      ? "A fixed task: one table; a seed only shuffles its rows."
      : "A custom dataset: one table.";
  if (focusReset) $("reset-button").focus();
}

// ── episode ─────────────────────────────────────────────────────────────

async function reset(event) {
  event?.preventDefault();
  const taskId = $("reset-task").value;
  const error = $("reset-error");
  clearError(error);
  stopAgent();
  const body = { episode_id: `web-${randomId()}` };
  const seedText = $("reset-seed").value.trim();
  if (state.generated.has(taskId)) {
    body.split = $("reset-split").value;
    let seed = seedText === "" ? 0 : Number(seedText);
    const difficulty = $("reset-difficulty").value;
    if (difficulty) {
      const query = new URLSearchParams({ split: body.split, difficulty, start: String(seed), limit: "1" });
      const found = await api("GET", `/tasks/${encodeURIComponent(taskId)}/instances?${query}`);
      if (!found.ok) return showError(error, found, "finding a seed");
      if (!found.data.instances.length) {
        return showError(error, { status: 404, data: { code: "NO_INSTANCE", detail: "no such instance in the next 1000 seeds" } });
      }
      seed = found.data.instances[0].seed;
      $("reset-seed").value = String(seed);
    }
    body.seed = seed;
  } else if (seedText !== "") {
    body.seed = Number(seedText);
  }
  $("reset-button").disabled = true;
  const result = await api("POST", `/reset/${encodeURIComponent(taskId)}`, body);
  $("reset-button").disabled = false;
  if (!result.ok) return showError(error, result, "reset refused");
  startEpisode(result.data, body);
}

function startEpisode(result, body) {
  const obs = result.observation;
  state.episode = {
    id: obs.episode_id,
    taskId: obs.task_id,
    maxSteps: obs.step + obs.steps_remaining,
    done: result.done,
    columns: obs.columns,
    scores: [],
    seed: body.seed,
    split: body.split,
  };
  state.offset = 0;
  $("episode").hidden = false;
  $("history").tBodies[0].replaceChildren();
  $("log").replaceChildren();
  const where = state.generated.has(obs.task_id) ? ` (${body.split}, seed ${body.seed})` : "";
  log(`Reset ${obs.task_id}${where}: episode ${obs.episode_id}.`);
  $("ep-description").textContent = obs.task_description;
  $("ep-description-box").open = true;
  const family = state.familyOf[obs.task_id];
  $("ep-task").textContent = `${obs.task_id}${where}${family ? ` · ${family}` : ""}`;
  clearError($("action-error"));
  fillOperations(obs.available_operations);
  showSqlBox(obs.available_operations);
  applyResult(result, null);
  // Fold the task cards (Reset moves up into view) and bring the new episode into view.
  $("task-cards-box").open = false;
  $("episode").scrollIntoView({ block: "start" });
}

/** Show a step result (or the reset's): facts, score, chart, history, banner, table. */
function applyResult(result, action, who) {
  const obs = result.observation;
  const episode = state.episode;
  episode.done = result.done;
  episode.columns = obs.columns;
  const reward = result.reward;
  const score = reward && typeof reward.total === "number" ? reward.total : null;
  episode.scores.push({ step: obs.step, score });
  $("ep-id").textContent = episode.id;
  $("ep-step").textContent = `${obs.step} / ${episode.maxSteps}`;
  $("ep-score").textContent = score === null ? "hidden" : fmt(score);
  state.lastScore = score;
  renderComponents(reward);
  renderChart(episode.scores);
  refreshColumnList(obs.columns);
  if (action) {
    const done = result.info?.last_action || action;
    const row = el(
      "tr",
      {},
      el("td", { text: obs.step }),
      el("td", { text: done.operation + (who ? ` (${who})` : "") }),
      el("td", { text: JSON.stringify(done.parameters || {}) }),
      el("td", { text: score === null ? "hidden" : fmt(score) }),
      el("td", { text: obs.message }),
    );
    $("history").tBodies[0].append(row);
    log(`Step ${obs.step}: ${done.operation}${who ? ` by ${who}` : ""} → ${obs.message}`);
  } else {
    log(obs.message.startsWith("Episode started.") ? "Episode started." : obs.message);
  }
  const banner = $("finished-banner");
  banner.hidden = !result.done;
  if (result.done) {
    banner.textContent = `Finished after ${obs.step} steps — final score ${score === null ? "hidden" : fmt(score)}. Reset to play again.`;
    log(`Episode finished: score ${score === null ? "hidden" : fmt(score)}.`, "done");
  }
  state.lastMessage = obs.message;
  state.lastQuery = obs.query_result || null;
  for (const id of ["step-button", "agent-step", "agent-play", "sql-query", "sql-apply"]) $(id).disabled = result.done || state.agentRunning;
  $("op-select").disabled = result.done;
  loadTable();
}

async function step(action, who) {
  const episode = state.episode;
  if (!episode || episode.done) return false;
  const error = $("action-error");
  clearError(error);
  const body = { episode_id: episode.id, operation: action.operation, parameters: action.parameters || {} };
  const result = await api("POST", `/step/${encodeURIComponent(episode.taskId)}`, body);
  if (!result.ok) {
    showError(error, result, "step refused, nothing changed");
    log(`Refused ${action.operation}: ${result.data?.code || result.status} ${result.data?.detail || ""}`, "err");
    return false;
  }
  applyResult(result.data, action, who);
  return true;
}

// ── the next-operation form, built from /schema ─────────────────────────

function fillOperations(available) {
  const select = $("op-select");
  const previous = select.value;
  select.replaceChildren();
  const names = available.filter((name) => state.params[name]);
  for (const name of names) select.append(el("option", { value: name, text: name }));
  select.value = names.includes(previous) ? previous : names[0];
  renderParams();
}

/** The SQL box shows only on tasks that offer `query` or `sql`, with a button for each. */
function showSqlBox(available) {
  const query = available.includes("query");
  const sql = available.includes("sql");
  $("sql-form").hidden = !(query || sql);
  $("sql-query").hidden = !query;
  $("sql-apply").hidden = !sql;
  $("sql-result").replaceChildren();
}

async function runSql(operation) {
  const box = $("sql-result");
  box.replaceChildren();
  if (!(await step({ operation, parameters: { sql: $("sql-text").value } }))) return;
  const result = state.lastQuery;
  if (operation !== "query" || !result) {
    box.append(el("p", { class: "muted", text: state.lastMessage || "" }));
    return;
  }
  const head = el("tr", {}, ...result.columns.map((c) => el("th", { scope: "col", text: c })));
  const rows = result.rows.map((row) => el("tr", {}, ...row.map((v) => el("td", { text: String(v) }))));
  const shown = `${result.rows.length} of ${result.total_rows} rows${result.truncated ? " (truncated)" : ""}`;
  box.append(
    el("p", { class: "muted", id: "sql-count", text: shown }),
    el("table", { id: "sql-table" }, el("thead", {}, head), el("tbody", {}, ...rows)),
  );
}

function typesOf(schema) {
  if (schema.anyOf) return schema.anyOf.map((s) => s.type);
  return [schema.type];
}

function refreshColumnList(columns) {
  let list = $("column-names");
  if (!list) {
    list = el("datalist", { id: "column-names" });
    document.body.append(list);
  }
  list.replaceChildren(...columns.map((c) => el("option", { value: c })));
}

/** One labelled input per parameter: enums are selects, numbers number inputs, lists are
 * comma-separated, objects JSON; optional ones may stay empty (the server's default). */
function renderParams() {
  const name = $("op-select").value;
  const box = $("op-params");
  const schema = state.params[name] || { properties: {} };
  const required = new Set(schema.required || []);
  const fields = [];
  for (const [param, info] of Object.entries(schema.properties || {})) {
    const id = `param-${param}`;
    const types = typesOf(info).filter((t) => t !== "null");
    const must = required.has(param);
    let input;
    let kind;
    if (info.enum) {
      kind = "enum";
      input = el("select", { id, name: param });
      if (!must) input.append(el("option", { value: "", text: info.default !== undefined ? `default (${info.default})` : "—" }));
      for (const option of info.enum) input.append(el("option", { value: option, text: option }));
    } else if (types.length === 1 && (types[0] === "integer" || types[0] === "number")) {
      kind = types[0];
      input = el("input", {
        id, name: param, type: "number", inputmode: "decimal",
        step: types[0] === "integer" ? "1" : "any",
        min: info.minimum, max: info.maximum,
        placeholder: info.default !== undefined ? `default ${info.default}` : "",
      });
    } else if (types.length === 1 && types[0] === "boolean") {
      kind = "boolean";
      input = el("select", { id, name: param }, el("option", { value: "", text: "default" }),
        el("option", { value: "true", text: "true" }), el("option", { value: "false", text: "false" }));
    } else if (types.length === 1 && types[0] === "array" && info.items?.type === "object") {
      kind = "json";
      input = el("textarea", { id, name: param, placeholder: '[{"operation": "strip", "parameters": {"column": "name"}}]' });
    } else if (types.length === 1 && types[0] === "array") {
      kind = "list";
      input = el("input", { id, name: param, placeholder: "comma-separated", list: param === "subset" || param === "keys" || param === "columns" ? "column-names" : null });
    } else if (types.length === 1 && types[0] === "object") {
      kind = "json";
      input = el("textarea", { id, name: param, placeholder: '{"old": "new"}' });
    } else if (types.length === 1 && types[0] === "string") {
      kind = "string";
      const columnish = /column|key/.test(param) || /column/i.test(info.description || "");
      input = el("input", { id, name: param, type: "text", list: columnish ? "column-names" : null, autocomplete: "off" });
    } else {
      kind = "value"; // any JSON value: numbers, true/false and null as JSON, the rest as text
      input = el("input", { id, name: param, type: "text", autocomplete: "off", placeholder: "text, or JSON: 42, true, null" });
    }
    input.dataset.kind = kind;
    input.dataset.required = String(must);
    const helpId = `${id}-help`;
    if (info.description) input.setAttribute("aria-describedby", helpId);
    fields.push(
      el(
        "div",
        { class: "field" },
        el("label", { for: id }, param, must ? el("span", { class: "req", "aria-hidden": "true", text: " *" }) : null,
          must ? el("span", { class: "visually-hidden", text: " (required)" }) : el("span", { class: "muted", text: " (optional)" })),
        input,
        info.description ? el("span", { class: "help", id: helpId, text: info.description }) : null,
      ),
    );
  }
  box.replaceChildren(...(fields.length ? fields : [el("p", { class: "empty muted", text: "No parameters." })]));
}

function readParams() {
  const parameters = {};
  for (const input of $("op-params").querySelectorAll("input, select, textarea")) {
    const raw = input.value.trim();
    if (raw === "") continue; // optional: the server's default; required: the server says so
    const kind = input.dataset.kind;
    if (kind === "integer" || kind === "number") parameters[input.name] = Number(raw);
    else if (kind === "boolean") parameters[input.name] = raw === "true";
    else if (kind === "list") {
      parameters[input.name] = raw.split(",").map((s) => s.trim()).filter(Boolean)
        .map((s) => (/^-?\d+$/.test(s) && input.name === "row_ids" ? Number(s) : s));
    } else if (kind === "json") {
      try {
        parameters[input.name] = JSON.parse(raw);
      } catch {
        throw new Error(`${input.name}: not valid JSON`);
      }
    } else if (kind === "value") {
      parameters[input.name] = parseValue(input.value);
    } else parameters[input.name] = input.value;
  }
  return parameters;
}

function parseValue(text) {
  const trimmed = text.trim();
  if (/^(-?\d+(\.\d+)?([eE][-+]?\d+)?|true|false|null)$/.test(trimmed)) return JSON.parse(trimmed);
  if (/^".*"$/.test(trimmed)) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  return text;
}

async function submitAction(event) {
  event.preventDefault();
  let parameters;
  try {
    parameters = readParams();
  } catch (err) {
    return showError($("action-error"), { status: 0, data: { code: "FORM", detail: err.message } });
  }
  await step({ operation: $("op-select").value, parameters });
}

/** Put an action into the form, so a visitor sees what the agent chose. */
function showActionInForm(action) {
  const select = $("op-select");
  if (![...select.options].some((o) => o.value === action.operation)) return;
  select.value = action.operation;
  renderParams();
  for (const [name, value] of Object.entries(action.parameters || {})) {
    const input = $(`param-${name}`);
    if (!input) continue;
    const kind = input.dataset.kind;
    if (kind === "list") input.value = value.join(", ");
    else if (kind === "json" || (kind === "value" && typeof value !== "string")) input.value = JSON.stringify(value);
    else input.value = String(value);
  }
}

// ── the heuristic agent ─────────────────────────────────────────────────

async function agentStep() {
  const episode = state.episode;
  if (!episode || episode.done) return false;
  const next = await api("POST", `/episodes/${encodeURIComponent(episode.id)}/heuristic`);
  if (!next.ok) {
    showError($("action-error"), next, "the heuristic could not act");
    return null;
  }
  showActionInForm(next.data.action);
  return step(next.data.action, "heuristic");
}

async function agentPlay() {
  if (!state.episode || state.agentRunning) return;
  state.agentRunning = true;
  state.stop = false;
  $("agent-stop").hidden = false;
  for (const id of ["step-button", "agent-step", "agent-play"]) $(id).disabled = true;
  $("agent-stop").focus();
  let budget = state.episode.maxSteps * 2 + 5; // refused steps do not use the episode's budget
  while (!state.stop && !state.episode.done && budget-- > 0) {
    const stepped = await agentStep();
    if (stepped === null) break;
    await sleep(AGENT_DELAY_MS);
  }
  stopAgent();
}

function stopAgent() {
  state.stop = true;
  if (!state.agentRunning) return;
  state.agentRunning = false;
  $("agent-stop").hidden = true;
  const done = !state.episode || state.episode.done;
  for (const id of ["step-button", "agent-step", "agent-play"]) $(id).disabled = done;
  $(done ? "reset-button" : "agent-play").focus();
}

// ── score: components and chart ─────────────────────────────────────────

const LABELS = {
  total: "Total",
  duplicate_score: "Duplicates",
  missing_score: "Missing values",
  dtype_score: "Types",
  outlier_score: "Outliers",
  schema_score: "Schema",
  repair_score: "Repair",
  preservation_score: "Preservation",
  row_integrity_score: "Row integrity",
  net_repair: "Net repair",
  penalty: "Penalty",
};

/** Whether a reward component counts for the episode's task: the total, the components its
 * scoring weighs (/tasks), and a penalty once one was taken. Others (the detection precision
 * beside its F1, say, or components of another kind of task) show only their floor. */
function counts(name, value) {
  const scoring = state.specs[state.episode?.taskId]?.scoring;
  if (name === "total" || !scoring) return true;
  if (name === "penalty") return value > FLOOR;
  return (scoring[name] || 0) > 0;
}

const FLOOR = 0.0001; // every score and component lies in [0.0001, 0.9999]

function renderComponents(reward) {
  const box = $("components");
  if (!reward || typeof reward.total !== "number") {
    box.replaceChildren(el("p", { class: "muted", text: "The score of this episode is hidden until it ends (a blind episode)." }));
    return;
  }
  const rows = [];
  for (const [name, value] of Object.entries(reward)) {
    if (typeof value !== "number" || !counts(name, value)) continue;
    const kind = name === "total" ? "total" : name === "penalty" ? "penalty" : "";
    rows.push(
      el(
        "div",
        { class: `component ${kind}` },
        el("span", { text: LABELS[name] || name }),
        el("span", { class: "bar", role: "presentation" }, el("span", { style: null })),
        el("span", { class: "value", text: fmt(value) }),
      ),
    );
    rows.at(-1).querySelector(".bar span").style.width = `${Math.max(0, Math.min(1, value)) * 100}%`;
  }
  box.replaceChildren(...rows);
}

function renderChart(points) {
  const width = 340;
  const height = 150;
  const pad = { left: 30, right: 10, top: 10, bottom: 22 };
  const plot = { w: width - pad.left - pad.right, h: height - pad.top - pad.bottom };
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true" });
  const known = points.filter((p) => p.score !== null);
  const maxStep = Math.max(1, ...points.map((p) => p.step));
  const x = (s) => pad.left + (s / maxStep) * plot.w;
  const y = (v) => pad.top + (1 - v) * plot.h;
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    root.append(svg("line", { class: v === 0 ? "axis" : "grid", x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v) }));
    const label = svg("text", { x: pad.left - 4, y: y(v) + 3, "text-anchor": "end" });
    label.textContent = v.toFixed(2);
    root.append(label);
  }
  for (const s of [0, maxStep]) {
    const label = svg("text", { x: x(s), y: height - 6, "text-anchor": s ? "end" : "start" });
    label.textContent = `step ${s}`;
    root.append(label);
  }
  if (known.length) {
    const line = known.map((p) => `${x(p.step).toFixed(1)},${y(p.score).toFixed(1)}`).join(" ");
    const first = known[0];
    const last = known.at(-1);
    root.append(svg("polygon", { class: "area", points: `${x(first.step)},${y(0)} ${line} ${x(last.step)},${y(0)}` }));
    root.append(svg("polyline", { class: "line", points: line }));
    for (const p of known) {
      const dot = svg("circle", { class: "dot", cx: x(p.step), cy: y(p.score), r: 3.2 });
      const title = svg("title", {});
      title.textContent = `step ${p.step}: ${fmt(p.score)}`;
      dot.append(title);
      root.append(dot);
    }
  }
  const chart = $("chart");
  chart.replaceChildren(root);
  const summary = known.length ? `Score over the episode: from ${fmt(known[0].score)} to ${fmt(known.at(-1).score)} in ${known.at(-1).step} steps` : "Score hidden";
  chart.setAttribute("aria-label", summary);
}

// ── the table ───────────────────────────────────────────────────────────

async function loadTable() {
  const episode = state.episode;
  if (!episode) return;
  const query = new URLSearchParams({ offset: String(state.offset), limit: String(state.limit) });
  const ticket = ++state.tableRequests;
  const result = await api("GET", `/episodes/${encodeURIComponent(episode.id)}/table?${query}`);
  if (ticket !== state.tableRequests) return; // a later request (a step, a reset) supersedes it
  const error = $("table-error");
  if (!result.ok) {
    showError(error, result, "table");
    return;
  }
  clearError(error);
  const page = result.data;
  if (page.total_rows > 0 && state.offset >= page.total_rows) {
    state.offset = Math.max(0, Math.floor((page.total_rows - 1) / state.limit) * state.limit);
    return loadTable();
  }
  renderTable(page);
}

function renderTable(page) {
  const table = $("data-table");
  table.dataset.step = String(page.step); // which version of the table is shown (for tests)
  table.dataset.offset = String(page.offset);
  const head = el("tr", {}, el("th", { scope: "col", text: "#" }));
  for (const column of page.columns) {
    head.append(
      el(
        "th",
        { scope: "col", class: column.name === page.key ? "key" : null, title: column.name === page.key ? "protected key column" : null },
        el("span", { class: "col-name", text: column.name }),
        el("span", { class: "col-stats", text: `${column.dtype} · ${column.missing} missing · ${column.distinct} distinct` }),
      ),
    );
  }
  table.tHead.replaceChildren(head);
  const body = [];
  for (const row of page.rows) {
    const tr = el("tr", {}, el("td", { class: "pos", text: row.position + 1 }));
    row.cells.forEach((value, i) => {
      const name = page.columns[i].name;
      const changed = Object.prototype.hasOwnProperty.call(row.changed, name);
      const missing = value === null;
      const classes = [changed ? "changed" : "", missing ? "missing" : ""].join(" ").trim();
      const was = changed ? row.changed[name] : undefined;
      const title = changed ? `was: ${was === null ? "missing" : JSON.stringify(was)}` : missing ? "missing" : null;
      tr.append(el("td", { class: classes || null, title, text: missing ? "missing" : String(value) }));
    });
    body.push(tr);
  }
  if (!body.length) body.push(el("tr", {}, el("td", { colspan: page.columns.length + 1, class: "muted", text: "No rows." })));
  table.tBodies[0].replaceChildren(...body);
  const changedCells = page.rows.reduce((n, r) => n + Object.keys(r.changed).length, 0);
  const pages = Math.max(1, Math.ceil(page.total_rows / state.limit));
  const current = Math.floor(state.offset / state.limit) + 1;
  $("page-info").textContent = `Page ${current} of ${pages}`;
  $("page-prev").disabled = state.offset === 0;
  $("page-next").disabled = state.offset + state.limit >= page.total_rows;
  const missing = page.columns.reduce((n, c) => n + c.missing, 0);
  $("table-summary").textContent =
    `${page.total_rows} rows × ${page.columns.length} columns (the dirty table had ${page.dirty_rows} rows) · ` +
    `${missing} missing cells · ${changedCells} changed cells on this page · rows ${page.total_rows ? page.offset + 1 : 0}–${page.offset + page.rows.length}`;
}

function setUpPager() {
  $("page-prev").addEventListener("click", () => {
    state.offset = Math.max(0, state.offset - state.limit);
    loadTable();
  });
  $("page-next").addEventListener("click", () => {
    state.offset += state.limit;
    loadTable();
  });
  $("page-size").addEventListener("change", (event) => {
    state.limit = Number(event.target.value);
    state.offset = 0;
    loadTable();
  });
}

// ── leaderboard ─────────────────────────────────────────────────────────

function fillRunFamilies(families) {
  const select = $("run-families");
  for (const family of families) select.append(el("option", { value: family, text: family }));
}

function boardUnavailable(status) {
  const notice = $("board-unavailable");
  notice.textContent = `The leaderboard is not available on this server (GET /leaderboard answered ${status || "nothing"}). Playing episodes works as usual.`;
  notice.hidden = false;
  for (const id of ["run-button", "submit-button"]) $(id).disabled = true;
}

async function loadBoard(highlightRun) {
  state.boardLoaded = true;
  const result = await api("GET", `/leaderboard?suite=${encodeURIComponent($("board-suite").value)}`);
  if (!result.ok) {
    renderVerified({ entries: [] });
    renderSelfReported([], 0);
    return boardUnavailable(result.status);
  }
  $("board-unavailable").hidden = true;
  for (const id of ["run-button", "submit-button"]) $(id).disabled = false;
  renderVerified(result.data.verified || { entries: [] }, highlightRun);
  renderSelfReported(result.data.leaderboard || [], result.data.total_submissions ?? 0);
  return result.data;
}

function renderVerified(board, highlightRun) {
  const entries = board.entries || [];
  $("grader-version").textContent = board.suite_version ? `Suite version ${board.suite_version}: ${board.episodes_per_run} episodes per run.` : "";
  const families = [...new Set([...entries, ...(board.anonymous || [])].flatMap((e) => Object.keys(e.families || {})))].sort();
  const table = $("verified");
  table.tHead.replaceChildren(
    el("tr", {},
      el("th", { scope: "col", class: "num", text: "Rank" }),
      el("th", { scope: "col", text: "Name" }),
      el("th", { scope: "col", text: "Model" }),
      el("th", { scope: "col", class: "num", text: "Normalised" }),
      el("th", { scope: "col", class: "num", text: "95% interval" }),
      el("th", { scope: "col", class: "num", text: "Raw" }),
      el("th", { scope: "col", class: "num", text: "Runs" }),
      el("th", { scope: "col", class: "num", text: "Episodes" }),
      ...families.map((f) => el("th", { scope: "col", class: "num", text: f })),
      el("th", { scope: "col", text: "Run records" })),
  );
  const runsOf = (e) => (e.records || []).map((r) => r.split("/").pop());
  // Runs without a submitter token: listed after the ranked rows, never ranked with them.
  const listed = [...entries, ...(board.anonymous || []).map((e) => ({ ...e, anonymous: true }))];
  const rows = listed.map((e) =>
    el("tr", { class: highlightRun && runsOf(e).includes(highlightRun) ? "highlight" : null, "data-run": runsOf(e).join(" ") },
      el("td", { class: "num", text: e.anonymous ? "–" : e.rank }),
      el("td", { class: "name", text: e.anonymous ? `${e.name} (anonymous)` : e.name }),
      el("td", { class: "name", text: e.model }),
      el("td", { class: "num", text: fmt(e.normalised) }),
      el("td", { class: "num", text: `${fmt(e.ci_low)} – ${fmt(e.ci_high)}` }),
      el("td", { class: "num", text: fmt(e.raw) }),
      el("td", { class: "num", text: e.runs }),
      el("td", { class: "num", text: e.episodes }),
      ...families.map((f) => el("td", { class: "num", text: fmt(e.families?.[f]?.normalised) })),
      el("td", { text: runsOf(e).join(", ") })),
  );
  if (!rows.length) rows.push(el("tr", { class: "empty" }, el("td", { colspan: 9 + families.length, text: "No complete suite runs yet: start one below." })));
  table.tBodies[0].replaceChildren(...rows);
}

function renderSelfReported(entries, total) {
  const tasks = [...new Set(entries.flatMap((e) => Object.keys(e.scores || {})))].sort();
  const table = $("self-board");
  table.tHead.replaceChildren(
    el("tr", {},
      el("th", { scope: "col", class: "num", text: "Rank" }),
      el("th", { scope: "col", text: "Model name" }),
      ...tasks.map((t) => el("th", { scope: "col", class: "num", text: t })),
      el("th", { scope: "col", class: "num", text: "Average" })),
  );
  const rows = entries.map((e) =>
    el("tr", {},
      el("td", { class: "num", text: e.rank }),
      el("td", { class: "name", text: e.model_name }),
      ...tasks.map((t) => el("td", { class: "num", text: fmt(e.scores?.[t]) })),
      el("td", { class: "num", text: fmt(e.avg_score) })),
  );
  if (!rows.length) rows.push(el("tr", { class: "empty" }, el("td", { colspan: 3 + tasks.length, text: "No self-reported scores." })));
  table.tBodies[0].replaceChildren(...rows);
  $("self-total").textContent = `${total} submission${total === 1 ? "" : "s"} in total.`;
}

async function submitScore(event) {
  event.preventDefault();
  const error = $("submit-error");
  const ok = $("submit-ok");
  clearError(error);
  ok.hidden = true;
  const body = {
    model_name: $("submit-model").value,
    task_id: $("submit-task").value,
    score: Number($("submit-score").value),
    steps: Number($("submit-steps").value || "0"),
  };
  const result = await api("POST", "/leaderboard/submit", body);
  if (!result.ok) {
    const unavailable = result.status === 404 && result.data?.code !== "UNKNOWN_TASK";
    return showError(error, result, unavailable ? "submissions are not available on this server" : "submission refused");
  }
  // Refresh the board first so the confirmation appears with the new row already shown.
  await loadBoard();
  ok.textContent = `Submitted “${result.data.entry?.model_name ?? body.model_name}” (self-reported).`;
  ok.hidden = false;
}

function fillFromEpisode() {
  const episode = state.episode;
  if (!episode) return;
  $("submit-task").value = episode.taskId;
  if (state.lastScore !== null) $("submit-score").value = String(state.lastScore);
  $("submit-steps").value = String(episode.scores.at(-1)?.step ?? 0);
}

/** Play one leaderboard episode with the heuristic, over the same REST calls any client uses. */
async function playRunEpisode(item, progress) {
  const { episode_id: id, task_id: taskId } = item;
  let last = null;
  let resetTried = false;
  for (let guard = 0; guard < 200; guard++) {
    const next = await api("POST", `/episodes/${encodeURIComponent(id)}/heuristic`);
    if (!next.ok && next.status === 404 && !resetTried) {
      // A server that creates run episodes lazily: start this one by its id first.
      resetTried = true;
      const started = await api("POST", `/reset/${encodeURIComponent(taskId)}`, { episode_id: id });
      if (!started.ok) throw Object.assign(new Error("reset"), { result: started });
      continue;
    }
    if (!next.ok) {
      if (next.data?.code === "EPISODE_FINISHED") break;
      throw Object.assign(new Error("heuristic"), { result: next });
    }
    const result = await api("POST", "/step", { episode_id: id, ...next.data.action });
    if (result.ok) {
      last = result.data;
      progress.textContent = `${taskId} (${id}): step ${last.observation.step}${last.done ? " — done" : ""}`;
      if (last.done) break;
    } else if (result.data?.code === "EPISODE_FINISHED") break;
  }
  const score = last?.reward?.total;
  progress.textContent = `${taskId} (${id}): finished after ${last?.observation?.step ?? "?"} steps, score ${typeof score === "number" ? fmt(score) : "hidden"}`;
}

async function startRun(event) {
  event.preventDefault();
  const error = $("run-error");
  clearError(error);
  const list = $("run-progress");
  list.replaceChildren();
  const body = { name: $("run-name").value, model: $("run-model").value };
  const suite = $("run-suite").value;
  if (suite) {
    body.suite = suite;
    $("board-suite").value = suite;
  } else {  // a practice run: never ranked
    const family = $("run-families").value;
    if (family) body.families = [family];
    body.episodes = Number($("run-episodes").value.trim() || "2");
  }
  $("run-button").disabled = true;
  try {
    const run = await api("POST", "/leaderboard/runs", body);
    if (!run.ok) {
      const unavailable = run.status === 404;
      return showError(error, run, unavailable ? "runs are not available on this server" : "run refused");
    }
    const runId = run.data.run_id;
    list.append(el("li", { text: `Run ${runId}: ${run.data.episodes.length} episodes from the secret split.` }));
    for (const item of run.data.episodes) {
      const progress = el("li", { text: `${item.task_id} (${item.episode_id}): starting` });
      list.append(progress);
      try {
        await playRunEpisode(item, progress);
      } catch (err) {
        showError(error, err.result || { status: 0, data: { detail: err.message } }, `episode ${item.episode_id}`);
        return;
      }
    }
    const board = await loadBoard(runId);
    const holds = (e) => (e.records || []).includes(`/leaderboard/runs/${runId}`);
    const entry = board?.verified?.entries?.find(holds);
    const apart = board?.verified?.anonymous?.find(holds);
    const shown = entry || apart;
    list.append(
      el("li", { class: "done", text: shown
        ? `Run ${runId} is ${entry ? `ranked #${entry.rank}` : "listed apart (anonymous)"} with mean ${fmt(shown.normalised)} (${fmt(shown.ci_low)} – ${fmt(shown.ci_high)}), normalised, pooled over ${shown.runs} run(s).`
        : `Run ${runId} finished; it is not ranked (a practice run, or not every episode finished).` }),
    );
  } finally {
    $("run-button").disabled = false;
  }
}

// ── start ───────────────────────────────────────────────────────────────

function init() {
  setUpTabs();
  setUpPager();
  $("reset-form").addEventListener("submit", reset);
  $("reset-task").addEventListener("change", (event) => chooseTask(event.target.value, false));
  $("action-form").addEventListener("submit", submitAction);
  $("op-select").addEventListener("change", renderParams);
  $("sql-query").addEventListener("click", () => runSql("query"));
  $("sql-apply").addEventListener("click", () => runSql("sql"));
  $("agent-step").addEventListener("click", async () => {
    $("agent-step").disabled = true;
    await agentStep();
    $("agent-step").disabled = !state.episode || state.episode.done;
  });
  $("agent-play").addEventListener("click", agentPlay);
  $("agent-stop").addEventListener("click", stopAgent);
  $("board-refresh").addEventListener("click", () => loadBoard());
  $("board-suite").addEventListener("change", () => loadBoard());
  $("submit-form").addEventListener("submit", submitScore);
  $("submit-fill").addEventListener("click", fillFromEpisode);
  $("run-form").addEventListener("submit", startRun);
  loadTasks();
}

document.addEventListener("DOMContentLoaded", init);
