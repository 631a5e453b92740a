// The landing page: nodes the user may see (each opens a terminal) and recent recordings.
import { api, toLogin } from "./common.js";

const error = document.getElementById("error");

function cell(row, content) {
  const td = document.createElement("td");
  if (content instanceof Node) td.append(content);
  else td.textContent = content;
  row.append(td);
}

function link(href, text) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = text;
  return a;
}

async function load() {
  const session = await (await api("/v1/webapi/session")).json();
  document.getElementById("user").textContent = `${session.username} (${session.roles.join(", ")})`;
  const nodes = (await (await api("/v1/webapi/nodes")).json()).items;
  const nodeRows = document.querySelector("#nodes tbody");
  for (const n of nodes) {
    const tr = document.createElement("tr");
    cell(tr, n.hostname);
    cell(tr, n.status);
    cell(
      tr,
      Object.entries(n.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(" "),
    );
    const form = document.createElement("span");
    const input = document.createElement("input");
    input.value = "root";
    input.size = 10;
    const open = document.createElement("button");
    open.type = "button";
    open.textContent = "Connect";
    open.addEventListener("click", () => {
      const q = new URLSearchParams({ node: n.hostname, login: input.value });
      window.open(`/web/terminal?${q}`, "_blank", "noopener");
    });
    form.append(input, " ", open);
    cell(tr, form);
    nodeRows.append(tr);
  }
  const recs = (await (await api("/v1/webapi/sessions?limit=50")).json()).items;
  const recRows = document.querySelector("#recordings tbody");
  for (const r of recs) {
    const tr = document.createElement("tr");
    cell(tr, new Date(r.start_time).toLocaleString());
    cell(tr, r.user);
    cell(tr, r.node);
    cell(tr, r.login);
    cell(tr, link(`/web/recordings/${encodeURIComponent(r.id)}`, "Play"));
    recRows.append(tr);
  }
}

document.getElementById("logout").addEventListener("click", async () => {
  await api("/v1/webapi/logout", { method: "POST" }).catch(() => undefined);
  toLogin();
});

load().catch((err) => {
  if (err.status === 401) toLogin();
  else error.textContent = err.message;
});
