// Recorded sessions: filters (user, node, a start-time window), offset paging, a link to play
// each one. Filters and the page live in the query string so a view can be shared and reloaded.
import { useEffect, useState } from "preact/hooks";
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { FilterBar, useQueryParams } from "../components/filter-bar.tsx";
import { Page } from "../components/page.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import { type Column, Table } from "../components/table.tsx";
import {
  OffsetPager,
  PAGE_SIZES,
  PlayerLink,
  pageSizeOf,
  TimeWindowInputs,
  windowQuery,
} from "./recordings-kit.tsx";
import "./recordings.css";

type RecordingPage = paths["/v1/webapi/sessions"]["get"]["responses"][200]["content"]["application/json"];
export type RecordingItem = RecordingPage["items"][number];

export function duration(r: RecordingItem): string {
  if (!r.end_time) return "—";
  const s = Math.max(0, Math.round((Date.parse(r.end_time) - Date.parse(r.start_time)) / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h ${m}m` : m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

const COLUMNS: Column<RecordingItem>[] = [
  { key: "start", header: "Started", render: (r) => <RelativeTime value={r.start_time} /> },
  { key: "user", header: "User", render: (r) => r.user },
  { key: "node", header: "Node", render: (r) => <span class="mono">{r.node}</span> },
  { key: "login", header: "Login", render: (r) => <span class="mono">{r.login}</span>, wide: true },
  { key: "duration", header: "Duration", render: duration, wide: true },
  { key: "size", header: "Size", render: (r) => size(r.size_bytes), wide: true },
  {
    key: "play",
    header: <span class="visually-hidden">Play</span>,
    render: (r) => (
      <PlayerLink class="play-link" id={r.id}>
        Play
        <span class="visually-hidden">
          {" "}
          the session of {r.user} on {r.node}
        </span>
      </PlayerLink>
    ),
  },
];

export default function RecordingsPage() {
  const [query, setQuery] = useQueryParams();
  const limit = pageSizeOf(query["limit"]);
  const offset = Math.max(0, Number.parseInt(query["offset"] ?? "0", 10) || 0);
  const [page, setPage] = useState<RecordingPage | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  const key = JSON.stringify([query["user"], query["node"], query["from"], query["to"], limit, offset]);
  useEffect(() => {
    let live = true;
    setError(undefined);
    const filters = {
      ...(query["user"] ? { user: query["user"] } : {}),
      ...(query["node"] ? { node: query["node"] } : {}),
      ...windowQuery(query["from"], query["to"]),
    };
    unwrap(api.GET("/v1/webapi/sessions", { params: { query: { ...filters, limit, offset } } }))
      .then((p) => live && setPage(p))
      .catch((e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [key]);

  const filtered = Boolean(query["user"] || query["node"] || query["from"] || query["to"]);
  return (
    <Page title="Recordings">
      <FilterBar
        key={JSON.stringify([query["user"], query["node"], query["from"], query["to"]])}
        label="Filter recordings"
        onApply={(v) =>
          setQuery({ user: v["user"], node: v["node"], from: v["from"], to: v["to"], offset: undefined })
        }
        onClear={() =>
          setQuery({ user: undefined, node: undefined, from: undefined, to: undefined, offset: undefined })
        }
      >
        <label>
          User
          <input name="user" id="filter-user" autocomplete="off" defaultValue={query["user"] ?? ""} />
        </label>
        <label>
          Node
          <input name="node" id="filter-node" autocomplete="off" defaultValue={query["node"] ?? ""} />
        </label>
        <TimeWindowInputs from={query["from"]} to={query["to"]} labels={["Started from", "Started before"]} />
      </FilterBar>
      <ErrorBanner error={error} />
      {page ? (
        <>
          <Table
            id="recordings"
            caption="Recorded sessions, newest first"
            columns={COLUMNS}
            rows={page.items}
            rowKey={(r) => r.id}
            empty={
              <EmptyState title={filtered ? "No recording matches these filters" : "No recordings yet"}>
                <p>
                  {filtered
                    ? "Widen the time window or clear the filters."
                    : "Sessions opened from the Nodes page or with svc ssh are recorded and listed here."}
                </p>
              </EmptyState>
            }
          />
          <OffsetPager
            total={page.total_count}
            offset={offset}
            limit={limit}
            label="Recording pages"
            onOffset={(o) => setQuery({ offset: o > 0 ? String(o) : undefined })}
            onLimit={(l) =>
              setQuery({ limit: l === PAGE_SIZES[1] ? undefined : String(l), offset: undefined })
            }
          />
        </>
      ) : error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </Page>
  );
}
