// The audit log (admins): filters (event type, user, a time window), offset paging, and each
// event's detail in a dialog. The list carries every field of an event, so the detail needs no
// second request; `?event=<id>` opens it, so a detail can be linked to.
import { useEffect, useState } from "preact/hooks";
import { ApiError, api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { Dialog } from "../components/dialog.tsx";
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

type AuditPage = paths["/v1/webapi/audit"]["get"]["responses"][200]["content"]["application/json"];
type AuditEvent = AuditPage["items"][number];

/** The event types the platform emits (docs/audit.md), offered while typing; any other is allowed. */
const KNOWN_TYPES = [
  "user.login",
  "user.logout",
  "user.locked",
  "user.create",
  "user.delete",
  "user.password_reset",
  "user.password_reset.issue",
  "user.sessions_revoked",
  "login.throttled",
  "login.released",
  "mfa.device.add",
  "mfa.device.delete",
  "cert.create",
  "session.start",
  "session.end",
  "ssh.auth",
  "ssh.auth.refused",
  "node.join",
  "node.delete",
  "join_token.create",
  "join_token.delete",
];

function Outcome(props: { success: boolean | undefined }) {
  if (props.success === undefined) return <span class="muted">—</span>;
  return props.success ? <span class="badge ok">success</span> : <span class="badge fail">failure</span>;
}

const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

function EventDetail(props: { event: AuditEvent }) {
  const e = props.event;
  const fields = Object.entries(e.fields).sort(([a], [b]) => (a < b ? -1 : 1));
  // session.end names its recording; a session's id is its recording's id (the agent's recorder).
  const recording =
    e.fields["recording_id"] ?? (e.event_type.startsWith("session.") ? e.fields["session_id"] : undefined);
  return (
    <>
      <dl class="event-detail">
        <dt>Time</dt>
        <dd>
          <time dateTime={e.time}>{new Date(e.time).toLocaleString()}</time>{" "}
          <span class="mono">({e.time})</span>
        </dd>
        <dt>Type</dt>
        <dd class="mono">{e.event_type}</dd>
        <dt>User</dt>
        <dd>{e.user_name || "—"}</dd>
        <dt>Outcome</dt>
        <dd>
          <Outcome success={e.success} />
        </dd>
        <dt>Event ID</dt>
        <dd class="mono">{e.id}</dd>
      </dl>
      <h3>Fields</h3>
      {fields.length === 0 ? (
        <p>None.</p>
      ) : (
        <dl class="event-fields">
          {fields.map(([k, v]) => (
            <div key={k}>
              <dt class="mono">{k}</dt>
              <dd>
                <pre>{text(v)}</pre>
              </dd>
            </div>
          ))}
        </dl>
      )}
      {typeof recording === "string" && recording !== "" ? (
        <p>
          <PlayerLink id={recording}>Play this session's recording</PlayerLink>
        </p>
      ) : null}
    </>
  );
}

export default function AuditLogPage() {
  const [query, setQuery] = useQueryParams();
  const limit = pageSizeOf(query["limit"]);
  const offset = Math.max(0, Number.parseInt(query["offset"] ?? "0", 10) || 0);
  const [page, setPage] = useState<AuditPage | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  // Refused by auth (not an admin): the search would be refused too, so it is not offered.
  const [forbidden, setForbidden] = useState(false);

  const key = JSON.stringify([query["type"], query["user"], query["from"], query["to"], limit, offset]);
  useEffect(() => {
    let live = true;
    setError(undefined);
    const filters = {
      ...(query["type"] ? { type: query["type"] } : {}),
      ...(query["user"] ? { user: query["user"] } : {}),
      ...windowQuery(query["from"], query["to"]),
    };
    unwrap(api.GET("/v1/webapi/audit", { params: { query: { ...filters, limit, offset } } }))
      .then((p) => live && setPage(p))
      .catch((e: unknown) => {
        if (!live) return;
        setPage(undefined);
        setForbidden(e instanceof ApiError && e.status === 403);
        setError(
          e instanceof ApiError && e.status === 403
            ? new Error("The audit log is for administrators: your roles do not allow reading it.")
            : e,
        );
      });
    return () => {
      live = false;
    };
  }, [key]);

  const open = page?.items.find((e) => e.id === query["event"]);
  const filtered = Boolean(query["type"] || query["user"] || query["from"] || query["to"]);
  const columns: Column<AuditEvent>[] = [
    { key: "time", header: "Time", render: (e) => <RelativeTime value={e.time} /> },
    { key: "type", header: "Event", render: (e) => <span class="mono">{e.event_type}</span> },
    { key: "user", header: "User", render: (e) => e.user_name || "—" },
    { key: "outcome", header: "Outcome", render: (e) => <Outcome success={e.success} />, wide: true },
    {
      key: "detail",
      header: <span class="visually-hidden">Detail</span>,
      render: (e) => (
        <button type="button" class="secondary detail-button" onClick={() => setQuery({ event: e.id })}>
          Details
          <span class="visually-hidden">
            {" "}
            of {e.event_type} at {new Date(e.time).toLocaleString()}
          </span>
        </button>
      ),
    },
  ];

  return (
    <Page title="Audit log">
      {forbidden ? null : (
        <FilterBar
          key={JSON.stringify([query["type"], query["user"], query["from"], query["to"]])}
          label="Search the audit log"
          onApply={(v) =>
            setQuery({
              type: v["type"],
              user: v["user"],
              from: v["from"],
              to: v["to"],
              offset: undefined,
              event: undefined,
            })
          }
          onClear={() =>
            setQuery({
              type: undefined,
              user: undefined,
              from: undefined,
              to: undefined,
              offset: undefined,
              event: undefined,
            })
          }
        >
          <label>
            Event type
            <input
              name="type"
              id="filter-type"
              list="audit-types"
              autocomplete="off"
              defaultValue={query["type"] ?? ""}
            />
          </label>
          <datalist id="audit-types">
            {KNOWN_TYPES.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
          <label>
            User
            <input name="user" id="filter-user" autocomplete="off" defaultValue={query["user"] ?? ""} />
          </label>
          <TimeWindowInputs from={query["from"]} to={query["to"]} labels={["From", "Before"]} />
        </FilterBar>
      )}
      <ErrorBanner error={error} />
      {page && query["event"] && !open ? (
        <p class="notice" id="event-missing">
          Event {query["event"]} is not on this page of results: search for it (its time or type) to open it.
        </p>
      ) : null}
      {page ? (
        <>
          <Table
            id="audit"
            caption="Audit events, newest first"
            columns={columns}
            rows={page.items}
            rowKey={(e) => e.id}
            empty={
              <EmptyState title={filtered ? "No event matches these filters" : "No events yet"}>
                {filtered ? <p>Widen the time window or clear the filters.</p> : null}
              </EmptyState>
            }
          />
          <OffsetPager
            total={page.total_count}
            offset={offset}
            limit={limit}
            label="Audit pages"
            onOffset={(o) => setQuery({ offset: o > 0 ? String(o) : undefined, event: undefined })}
            onLimit={(l) =>
              setQuery({
                limit: l === PAGE_SIZES[1] ? undefined : String(l),
                offset: undefined,
                event: undefined,
              })
            }
          />
        </>
      ) : error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
      <Dialog
        id="event-dialog"
        open={open !== undefined}
        title={open ? `Event ${open.event_type}` : "Event"}
        onClose={() => setQuery({ event: undefined })}
      >
        {open ? <EventDetail event={open} /> : null}
      </Dialog>
    </Page>
  );
}
