// Join tokens: the node tokens and bots' bootstrap tokens that exist (never their secrets), a
// form to make a node token (name, lifetime, labels) that answers the exact `svcd agent` command
// to copy to the node, and delete with a confirmation.
import { useState } from "preact/hooks";
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { Dialog } from "../components/dialog.tsx";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Page } from "../components/page.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import { type Column, Table } from "../components/table.tsx";
import { ConfirmDialog, OneTimeSecret, useList } from "./users-kit.tsx";
import "./users.css";

type TokenList = paths["/v1/webapi/admin/tokens"]["get"]["responses"][200]["content"]["application/json"];
type TokenRow = TokenList["items"][number];
type Created = paths["/v1/webapi/admin/tokens"]["post"]["responses"][201]["content"]["application/json"];

const TTLS: Array<[string, number]> = [
  ["15 minutes", 900],
  ["1 hour", 3600],
  ["6 hours", 6 * 3600],
  ["1 day", 86_400],
  ["7 days", 7 * 86_400],
];

/** "env=prod, rack=1" -> labels; a part without "=" is an error a person can fix. */
export function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(",").map((s) => s.trim())) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    if (eq <= 0) throw new Error(`Label "${part}" must be key=value.`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

const labelsText = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");

/** Spent (by which node, when), expired, or waiting for its node. */
function TokenState(props: { token: TokenRow }) {
  const t = props.token;
  if (t.used) {
    return (
      <span data-state="used">
        used
        {t.used_by ? (
          <>
            {" "}
            by <span class="mono">{t.used_by}</span>
          </>
        ) : null}{" "}
        <RelativeTime value={t.used_at} />
      </span>
    );
  }
  if (Date.parse(t.expires_at) <= Date.now()) return <span data-state="expired">expired</span>;
  return <span data-state="unused">not used yet</span>;
}

function CreateTokenDialog(props: { open: boolean; onClose: () => void; onCreated: (c: Created) => void }) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (e: SubmitEvent): Promise<void> => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    setBusy(true);
    setError(undefined);
    try {
      const name = String(form.get("name") ?? "").trim();
      const labels = parseLabels(String(form.get("labels") ?? ""));
      const created = await unwrap(
        api.POST("/v1/webapi/admin/tokens", {
          body: {
            ...(name ? { name } : {}),
            ttl_seconds: Number(form.get("ttl") ?? 3600),
            ...(Object.keys(labels).length ? { node_labels: labels } : {}),
          },
        }),
      );
      formEl.reset();
      props.onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      id="create-token"
      open={props.open}
      title="Create a node join token"
      onClose={props.onClose}
      actions={
        <>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" form="create-token-form" id="create-token-submit" disabled={busy}>
            Create
          </button>
        </>
      }
    >
      <form id="create-token-form" class="stack" onSubmit={submit}>
        <label>
          Name (optional)
          <input
            id="new-token-name"
            name="name"
            maxLength={63}
            pattern="[a-z0-9]([a-z0-9\-]*[a-z0-9])?"
            autocomplete="off"
            placeholder="generated when empty"
          />
        </label>
        <label>
          Valid for
          <select id="new-token-ttl" name="ttl" defaultValue="3600">
            {TTLS.map(([label, seconds]) => (
              <option key={seconds} value={String(seconds)}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Node labels (optional)
          <input id="new-token-labels" name="labels" autocomplete="off" placeholder="env=prod, rack=1" />
        </label>
        <p class="help">One node joins with a token, which is then spent. The node gets the role "node".</p>
      </form>
      <ErrorBanner error={error} id="create-token-error" />
    </Dialog>
  );
}

function CommandDialog(props: { created: Created | undefined; onClose: () => void }) {
  const c = props.created;
  return (
    <Dialog
      id="token-command"
      open={c !== undefined}
      title={c ? `Join token ${c.token.name}` : "Join token"}
      onClose={props.onClose}
    >
      {c ? (
        <>
          <p>
            Run this on the node (as root, with <code>svcd</code> installed); the token works once and expires{" "}
            <RelativeTime value={c.token.expires_at} />. The secret is shown only now.
          </p>
          <OneTimeSecret
            id="agent-command"
            label="Agent command"
            copyLabel="Copy agent command"
            value={c.agent_command}
            multiline
          />
          <p class="help">
            The command checks auth by the host CA pin <code class="mono">{c.ca_pin}</code>; change{" "}
            <code>--data-dir</code> if the node keeps its identity elsewhere.
          </p>
        </>
      ) : null}
    </Dialog>
  );
}

export default function TokensPage() {
  const list = useList(() => unwrap(api.GET("/v1/webapi/admin/tokens")));
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | undefined>(undefined);
  const [deleting, setDeleting] = useState<string | undefined>(undefined);

  const columns: Column<TokenRow>[] = [
    { key: "name", header: "Name", render: (t) => <span class="mono">{t.name}</span> },
    {
      key: "for",
      header: "For",
      render: (t) => (t.bot_name ? `bot ${t.bot_name}` : `node (${t.join_method})`),
      wide: true,
    },
    { key: "state", header: "State", render: (t) => <TokenState token={t} /> },
    { key: "expires", header: "Expires", render: (t) => <RelativeTime value={t.expires_at} />, wide: true },
    {
      key: "labels",
      header: "Node labels",
      render: (t) => <span class="mono">{labelsText(t.node_labels) || "—"}</span>,
      wide: true,
    },
    {
      key: "actions",
      header: <span class="visually-hidden">Actions</span>,
      render: (t) => (
        <button type="button" class="danger" data-action="delete" onClick={() => setDeleting(t.name)}>
          Delete<span class="visually-hidden"> token {t.name}</span>
        </button>
      ),
    },
  ];

  return (
    <Page
      title="Join tokens"
      actions={
        list.items ? (
          <button type="button" id="create-token-open" onClick={() => setCreating(true)}>
            Create token
          </button>
        ) : null
      }
    >
      <ErrorBanner error={list.error} id="tokens-error" />
      {list.items ? (
        <Table
          id="tokens"
          caption="Join tokens"
          columns={columns}
          rows={list.items}
          rowKey={(t) => t.name}
          empty={
            <EmptyState title="No join tokens">
              <p>Create one to add a node: it comes with the command to run there.</p>
            </EmptyState>
          }
        />
      ) : list.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
      <CreateTokenDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(c) => {
          setCreating(false);
          setCreated(c);
          list.reload();
        }}
      />
      <CommandDialog created={created} onClose={() => setCreated(undefined)} />
      <ConfirmDialog
        id="confirm-delete-token"
        open={deleting !== undefined}
        title={`Delete token ${deleting ?? ""}?`}
        confirmLabel="Delete token"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          await unwrap(
            api.DELETE("/v1/webapi/admin/tokens/{name}", { params: { path: { name: deleting ?? "" } } }),
          );
          setDeleting(undefined);
          list.reload();
        }}
      >
        <p>A node that has not joined yet can no longer join with it. Nodes that joined stay.</p>
      </ConfirmDialog>
    </Page>
  );
}
