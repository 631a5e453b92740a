// Bots (agent identities): their roles, credential generation and lock state. A locked bot
// presented stale credentials (a copy of them is in someone else's hands): its renewals are refused
// until it is bootstrapped again with a fresh token (docs/machine-identity.md).
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Page } from "../components/page.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import { type Column, Table } from "../components/table.tsx";
import { useList } from "./users-kit.tsx";
import "./users.css";

type BotList = paths["/v1/webapi/admin/bots"]["get"]["responses"][200]["content"]["application/json"];
type BotRow = BotList["items"][number];

function State(props: { bot: BotRow }) {
  const b = props.bot;
  if (b.locked) {
    return (
      <span class="badge locked" data-state="locked" title={b.locked_reason}>
        Locked{b.locked_at ? " " : ""}
        {b.locked_at ? <RelativeTime value={b.locked_at} /> : null}
        <span class="visually-hidden">: {b.locked_reason}</span>
      </span>
    );
  }
  if (b.generation === 0)
    return (
      <span class="badge" data-state="new">
        Not bootstrapped
      </span>
    );
  return (
    <span class="badge" data-state="active">
      Active
    </span>
  );
}

const COLUMNS: Column<BotRow>[] = [
  { key: "name", header: "Name", render: (b) => <span class="mono">{b.name}</span> },
  { key: "state", header: "State", render: (b) => <State bot={b} /> },
  { key: "roles", header: "Roles", render: (b) => b.roles.join(", ") },
  { key: "generation", header: "Generation", render: (b) => String(b.generation), wide: true },
  {
    key: "renewed",
    header: "Last renewed",
    render: (b) => <RelativeTime value={b.last_renewed_at} />,
    wide: true,
  },
  {
    key: "expires",
    header: "Certificate ends",
    render: (b) => <RelativeTime value={b.cert_expires_at} />,
    wide: true,
  },
  { key: "ttl", header: "Certificate lifetime", render: (b) => b.cert_ttl, wide: true },
];

export default function BotsPage() {
  const list = useList(() => unwrap(api.GET("/v1/webapi/admin/bots")));
  const locked = list.items?.filter((b) => b.locked) ?? [];
  return (
    <Page title="Bots">
      <ErrorBanner error={list.error} id="bots-error" />
      {locked.length > 0 ? (
        <p class="notice" role="status">
          {locked.length === 1 ? `Bot ${locked[0]?.name} is locked` : `${locked.length} bots are locked`}:
          stale credentials were presented, so renewals are refused until it is bootstrapped again with a
          fresh token.
        </p>
      ) : null}
      {list.items ? (
        <Table
          id="bots"
          caption="Bots (agent identities)"
          columns={COLUMNS}
          rows={list.items}
          rowKey={(b) => b.name}
          empty={
            <EmptyState title="No bots">
              <p>
                Create one with <code>svcctl agent-identities add NAME --roles …</code>{" "}
                (docs/machine-identity.md).
              </p>
            </EmptyState>
          }
        />
      ) : list.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
    </Page>
  );
}
