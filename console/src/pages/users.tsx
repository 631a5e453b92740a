// Users: who exists, with which roles, and where each is managed. Users applied in Kubernetes or
// the manifests folder are read-only here (their owner is GitOps); users made through the API get
// create, delete and a one-time password-reset link to hand over (the admin never picks a password).
import { useState } from "preact/hooks";
import { api, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { Dialog } from "../components/dialog.tsx";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Page } from "../components/page.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import { type Column, Table } from "../components/table.tsx";
import { ConfirmDialog, ManagedBadge, OneTimeSecret, useList } from "./users-kit.tsx";
import "./users.css";

type UserList = paths["/v1/webapi/admin/users"]["get"]["responses"][200]["content"]["application/json"];
type UserRow = UserList["items"][number];
type Reset =
  paths["/v1/webapi/admin/users/{name}/reset"]["post"]["responses"][200]["content"]["application/json"];

const splitList = (text: string): string[] =>
  text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

function CreateUserDialog(props: { open: boolean; onClose: () => void; onCreated: (reset: Reset) => void }) {
  const roles = useList(() => unwrap(api.GET("/v1/webapi/admin/roles")));
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (e: SubmitEvent): Promise<void> => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const form = new FormData(formEl);
    const chosen = form.getAll("roles").map(String);
    if (chosen.length === 0) {
      setError(new Error("Choose at least one role."));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const logins = splitList(String(form.get("logins") ?? ""));
      const created = await unwrap(
        api.POST("/v1/webapi/admin/users", {
          body: {
            name: String(form.get("name") ?? "").trim(),
            roles: chosen,
            ...(logins.length ? { logins } : {}),
          },
        }),
      );
      formEl.reset();
      props.onCreated(created.reset);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      id="create-user"
      open={props.open}
      title="Create a user"
      onClose={props.onClose}
      actions={
        <>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" form="create-user-form" id="create-user-submit" disabled={busy}>
            Create
          </button>
        </>
      }
    >
      <form id="create-user-form" class="stack" onSubmit={submit}>
        <label>
          Name
          <input
            id="new-user-name"
            name="name"
            required
            maxLength={64}
            pattern="[a-z0-9]([a-z0-9.\-]*[a-z0-9])?"
            autocomplete="off"
            aria-describedby="new-user-name-help"
          />
        </label>
        <p id="new-user-name-help" class="help">
          Lower-case letters, digits, "." and "-".
        </p>
        <fieldset>
          <legend>Roles</legend>
          {roles.items ? (
            roles.items.map((r) => (
              <label key={r.name} class="check">
                <input type="checkbox" name="roles" value={r.name} />
                {r.name}
              </label>
            ))
          ) : (
            <ErrorBanner error={roles.error} />
          )}
        </fieldset>
        <label>
          Unix logins (optional, comma-separated)
          <input id="new-user-logins" name="logins" autocomplete="off" placeholder="alice, deploy" />
        </label>
      </form>
      <ErrorBanner error={error} id="create-user-error" />
    </Dialog>
  );
}

function ResetLinkDialog(props: { reset: Reset | undefined; created: boolean; onClose: () => void }) {
  const r = props.reset;
  return (
    <Dialog
      id="reset-link"
      open={r !== undefined}
      title={r ? `${props.created ? "User created: " : ""}password link for ${r.username}` : "Password link"}
      onClose={props.onClose}
    >
      {r ? (
        <>
          <p>
            Send this link to {r.username}: it sets their password, works once and expires{" "}
            <RelativeTime value={r.expires_at} />. It is shown only now.
          </p>
          <OneTimeSecret id="reset-url" label="Reset link" copyLabel="Copy reset link" value={r.reset_url} />
          <OneTimeSecret
            id="reset-command"
            label="Or with the CLI"
            copyLabel="Copy CLI command"
            value={r.login_command}
          />
          {r.revoked_sessions > 0 ? <p>{r.revoked_sessions} session(s) of the user were ended.</p> : null}
        </>
      ) : null}
    </Dialog>
  );
}

export default function UsersPage() {
  const list = useList(() => unwrap(api.GET("/v1/webapi/admin/users")));
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<{ reset: Reset; created: boolean } | undefined>(undefined);
  const [deleting, setDeleting] = useState<string | undefined>(undefined);
  const [resetting, setResetting] = useState<string | undefined>(undefined);

  const columns: Column<UserRow>[] = [
    { key: "name", header: "Name", render: (u) => <span class="mono">{u.name}</span> },
    { key: "roles", header: "Roles", render: (u) => u.roles.join(", ") },
    { key: "managed", header: "Managed", render: (u) => <ManagedBadge managedBy={u.managed_by} /> },
    {
      key: "logins",
      header: "Logins",
      render: (u) => <span class="mono">{(u.traits["logins"] ?? []).join(", ") || "—"}</span>,
      wide: true,
    },
    { key: "mfa", header: "MFA", render: (u) => (u.webauthn_enrolled ? "enrolled" : "—"), wide: true },
    {
      key: "locked",
      header: "Sign-in",
      render: (u) =>
        u.locked_until ? (
          <span>
            waits until <RelativeTime value={u.locked_until} />
          </span>
        ) : (
          "open"
        ),
      wide: true,
    },
    {
      key: "actions",
      header: <span class="visually-hidden">Actions</span>,
      render: (u) =>
        u.editable ? (
          <span class="row-actions">
            <button type="button" class="secondary" data-action="reset" onClick={() => setResetting(u.name)}>
              Reset password<span class="visually-hidden"> of {u.name}</span>
            </button>
            <button type="button" class="danger" data-action="delete" onClick={() => setDeleting(u.name)}>
              Delete<span class="visually-hidden"> {u.name}</span>
            </button>
          </span>
        ) : (
          <span class="read-only">read-only</span>
        ),
    },
  ];

  return (
    <Page
      title="Users"
      actions={
        list.items ? (
          <button type="button" id="create-user-open" onClick={() => setCreating(true)}>
            Create user
          </button>
        ) : null
      }
    >
      <ErrorBanner error={list.error} id="users-error" />
      {list.items ? (
        <Table
          id="users"
          caption="Users"
          columns={columns}
          rows={list.items}
          rowKey={(u) => u.name}
          empty={<EmptyState title="No users yet" />}
        />
      ) : list.error ? null : (
        <p aria-busy="true">Loading…</p>
      )}
      {list.items ? (
        <p class="help after-table">
          Users from Kubernetes or the manifests folder are changed there; those created here (or with{" "}
          <code>svcctl users add</code>) can be deleted or sent a new password link.
        </p>
      ) : null}
      <CreateUserDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(reset) => {
          setCreating(false);
          setShown({ reset, created: true });
          list.reload();
        }}
      />
      <ResetLinkDialog
        reset={shown?.reset}
        created={shown?.created ?? false}
        onClose={() => setShown(undefined)}
      />
      <ConfirmDialog
        id="confirm-reset"
        open={resetting !== undefined}
        title={`New password link for ${resetting ?? ""}?`}
        confirmLabel="Make link"
        onClose={() => setResetting(undefined)}
        onConfirm={async () => {
          const name = resetting ?? "";
          const reset = await unwrap(
            api.POST("/v1/webapi/admin/users/{name}/reset", { params: { path: { name } }, body: {} }),
          );
          setResetting(undefined);
          setShown({ reset, created: false });
        }}
      >
        <p>
          The user's sessions end now and any earlier link stops working. Their password works until they use
          the new link.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        id="confirm-delete"
        open={deleting !== undefined}
        title={`Delete ${deleting ?? ""}?`}
        confirmLabel="Delete user"
        onClose={() => setDeleting(undefined)}
        onConfirm={async () => {
          await unwrap(
            api.DELETE("/v1/webapi/admin/users/{name}", { params: { path: { name: deleting ?? "" } } }),
          );
          setDeleting(undefined);
          list.reload();
        }}
      >
        <p>The user's sessions end now and they can no longer sign in.</p>
      </ConfirmDialog>
    </Page>
  );
}
