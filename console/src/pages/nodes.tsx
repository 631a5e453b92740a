// Nodes: search, label chips (`env=prod`), status, key paging, all done by auth (fast with
// 10,000 nodes), and Connect with one of the logins the user's roles allow on that node (a
// choice, never a free text box). Filters live in the query string; the page keys in memory.
import { useEffect, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { FilterBar, useQueryParams } from "../components/filter-bar.tsx";
import { Page } from "../components/page.tsx";
import { Pager, useKeyPager } from "../components/pager.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import { type Column, Table } from "../components/table.tsx";
import "./nodes.css";

type NodesPage = paths["/v1/webapi/nodes"]["get"]["responses"][200]["content"]["application/json"];
type NodeItem = NodesPage["items"][number];

const PAGE_SIZE = 50;

/** The `labels` query parameter as chips: `env=prod,team=a` -> ["env=prod", "team=a"]. */
const chipsOf = (labels: string | undefined): string[] =>
  (labels ?? "")
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "");

export function terminalHref(node: string, login: string): string {
  return `/web/terminal?${new URLSearchParams({ node, login })}`;
}

function Connect(props: { node: NodeItem }) {
  const { route } = useLocation();
  const { node } = props;
  const [login, setLogin] = useState(node.logins[0] ?? "");
  if (node.logins.length === 0) return <span class="muted">No login allowed</span>;
  const id = `login-${node.id}`;
  return (
    <form
      class="connect"
      onSubmit={(e) => {
        e.preventDefault();
        route(terminalHref(node.hostname, login));
      }}
    >
      <label class="visually-hidden" for={id}>
        Login on {node.hostname}
      </label>
      <select id={id} class="connect-login" value={login} onChange={(e) => setLogin(e.currentTarget.value)}>
        {node.logins.map((l) => (
          <option key={l} value={l}>
            {l}
          </option>
        ))}
      </select>
      <button type="submit" class="connect-button" disabled={node.status !== "online"}>
        Connect<span class="visually-hidden"> to {node.hostname}</span>
      </button>
    </form>
  );
}

export default function NodesPage() {
  const [query, setQuery] = useQueryParams();
  const pager = useKeyPager();
  const chips = chipsOf(query["labels"]);
  const [page, setPage] = useState<NodesPage | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);

  const search = query["search"] ?? "";
  const status = query["status"] ?? "";
  const labels = chips.join(",");
  const { startKey, reset } = pager;

  // A new filter starts from the first page.
  useEffect(() => reset(), [search, status, labels, reset]);

  useEffect(() => {
    let live = true;
    setLoading(true);
    unwrap(
      api.GET("/v1/webapi/nodes", {
        params: {
          query: {
            limit: PAGE_SIZE,
            ...(search ? { search } : {}),
            ...(labels ? { labels } : {}),
            ...(status === "online" || status === "offline" ? { status } : {}),
            ...(startKey ? { start_key: startKey } : {}),
          },
        },
      }),
    )
      .then((p) => {
        if (!live) return;
        setPage(p);
        setError(undefined);
      })
      .catch((err: unknown) => live && setError(err))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [search, status, labels, startKey]);

  const addChip = (chip: string): void => {
    const c = chip.trim();
    if (c === "" || chips.includes(c)) return;
    setQuery({ labels: [...chips, c].join(",") });
  };
  const removeChip = (chip: string): void => setQuery({ labels: chips.filter((c) => c !== chip).join(",") });

  const columns: Column<NodeItem>[] = [
    { key: "hostname", header: "Node", render: (n) => <span class="mono node-name">{n.hostname}</span> },
    {
      key: "status",
      header: "Status",
      // Hidden on phones so a row fits: an offline node's Connect is disabled there, and the
      // status filter stays.
      wide: true,
      render: (n) => (
        <span
          class={`badge status-${n.status}`}
          title={n.last_heartbeat ? `last heartbeat ${n.last_heartbeat}` : ""}
        >
          {n.status}
        </span>
      ),
    },
    {
      key: "labels",
      header: "Labels",
      render: (n) => (
        <ul class="label-list" aria-label={`Labels of ${n.hostname}`}>
          {Object.entries(n.labels)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => (
              <li key={k}>
                <button
                  type="button"
                  class="label-chip"
                  title={`Show only nodes with ${k}=${v}`}
                  onClick={() => addChip(`${k}=${v}`)}
                >
                  {k}={v}
                </button>
              </li>
            ))}
        </ul>
      ),
    },
    {
      key: "seen",
      header: "Last seen",
      wide: true,
      render: (n) => (n.last_heartbeat ? <RelativeTime value={n.last_heartbeat} /> : "—"),
    },
    { key: "connect", header: "Connect", render: (n) => <Connect node={n} /> },
  ];

  const total = page?.total_count;
  return (
    <Page
      title="Nodes"
      actions={
        total === undefined ? null : (
          <span id="node-count" class="muted" aria-live="polite">
            {total.toLocaleString()} {total === 1 ? "node" : "nodes"}
          </span>
        )
      }
    >
      <FilterBar
        label="Filter nodes"
        onApply={(v) => {
          const extra = v["label"] ?? "";
          setQuery({
            search: v["search"],
            status: v["status"],
            labels: extra && !chips.includes(extra) ? [...chips, extra].join(",") : labels,
          });
          const input = document.getElementById("node-label") as HTMLInputElement | null;
          if (input) input.value = "";
        }}
        onClear={() => setQuery({ search: undefined, status: undefined, labels: undefined })}
      >
        <label>
          Search
          <input
            id="node-search"
            name="search"
            type="search"
            placeholder="name or label"
            defaultValue={search}
            key={`s-${search}`}
            maxLength={256}
          />
        </label>
        <label>
          Add label filter
          <input
            id="node-label"
            name="label"
            placeholder="env=prod"
            pattern="[A-Za-z0-9._\/\-]+(=.*)?"
            title="key=value, or a key alone"
          />
        </label>
        <label>
          Status
          <select id="node-status" name="status" value={status} key={`st-${status}`}>
            <option value="">Any</option>
            <option value="online">Online</option>
            <option value="offline">Offline</option>
          </select>
        </label>
      </FilterBar>
      {chips.length > 0 ? (
        <ul class="chips" aria-label="Label filters">
          {chips.map((c) => (
            <li key={c} class="chip">
              <span class="mono">{c}</span>
              <button type="button" class="chip-remove" onClick={() => removeChip(c)}>
                <span aria-hidden="true">×</span>
                <span class="visually-hidden">Remove the filter {c}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <ErrorBanner id="nodes-error" error={error} />
      {/* Above the table: with 50 rows of chips and Connect forms, a pager below is far by Tab. */}
      <Pager
        label="Node pages"
        page={pager.page}
        nextKey={page?.next_key}
        onPrev={pager.prev}
        onNext={pager.next}
      />
      <div id="nodes" aria-busy={loading ? "true" : "false"}>
        {page ? (
          <Table
            id="nodes-table"
            caption="Nodes you may see"
            columns={columns}
            rows={page.items}
            rowKey={(n) => n.id}
            empty={
              <EmptyState
                title={search || labels || status ? "No node matches these filters" : "No nodes yet"}
              >
                {search || labels || status ? (
                  <p>Change or clear the filters.</p>
                ) : (
                  <p>
                    Nodes appear here once an agent joins with a join token, or your roles allow none of them.
                  </p>
                )}
              </EmptyState>
            }
          />
        ) : null}
      </div>
    </Page>
  );
}
