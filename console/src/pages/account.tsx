// The account: who is signed in, the security keys (WebAuthn devices: add with the browser's
// WebAuthn prompt through @simplewebauthn/browser, rename, remove) and sign out. A session whose
// roles require MFA but has no key yet (scope "mfa_enrollment") may only add its first key here,
// then signs in again with it.
import { type PublicKeyCredentialCreationOptionsJSON, startRegistration } from "@simplewebauthn/browser";
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, describeError, unwrap } from "../api/client.ts";
import type { paths } from "../api/schema.d.ts";
import { Dialog } from "../components/dialog.tsx";
import { EmptyState } from "../components/empty-state.tsx";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Page } from "../components/page.tsx";
import { RelativeTime } from "../components/relative-time.tsx";
import { type Column, Table } from "../components/table.tsx";
import { useSession } from "../session.tsx";

type Device =
  paths["/v1/webapi/mfa/devices"]["get"]["responses"][200]["content"]["application/json"]["items"][number];

async function signOut(next?: string): Promise<void> {
  try {
    await unwrap(api.POST("/v1/webapi/logout"));
  } finally {
    location.assign(next ? `/web/login?next=${encodeURIComponent(next)}` : "/web/login");
  }
}

function webauthnError(err: unknown): string {
  if (err instanceof Error && (err.name === "NotAllowedError" || err.name === "AbortError")) {
    return "The security key did not answer (cancelled or timed out). Try again.";
  }
  if (err instanceof Error && err.name === "InvalidStateError") return "This key is already registered.";
  return describeError(err);
}

export default function AccountPage() {
  const { session } = useSession();
  const enrolOnly = session?.scope === "mfa_enrollment";
  const [devices, setDevices] = useState<Device[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [status, setStatus] = useState("");
  const [adding, setAdding] = useState(false);
  const [renaming, setRenaming] = useState<Device | undefined>(undefined);
  const [removing, setRemoving] = useState<Device | undefined>(undefined);
  const [enrolledNow, setEnrolledNow] = useState(false);

  const load = useCallback(async () => {
    try {
      setDevices((await unwrap(api.GET("/v1/webapi/mfa/devices"))).items);
    } catch (err) {
      setError(err);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  async function addKey(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get("device_name") ?? "").trim();
    setError(undefined);
    setStatus("");
    setAdding(true);
    try {
      const begin = await unwrap(api.POST("/v1/webapi/mfa/webauthn/register/begin", { body: {} }));
      const credential = await startRegistration({
        optionsJSON: begin.webauthn as unknown as PublicKeyCredentialCreationOptionsJSON,
      });
      const device = await unwrap(
        api.POST("/v1/webapi/mfa/webauthn/register/finish", {
          body: {
            challenge_id: begin.challenge_id,
            device_name: name || "security key",
            credential: credential as never,
          },
        }),
      );
      form.reset();
      setStatus(`Added ${device.name}.`);
      if (enrolOnly) setEnrolledNow(true);
      await load();
    } catch (err) {
      setError(new Error(webauthnError(err)));
    } finally {
      setAdding(false);
    }
  }

  async function rename(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    if (!renaming) return;
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get("name") ?? "").trim();
    try {
      const d = await unwrap(
        api.PATCH("/v1/webapi/mfa/devices/{id}", { params: { path: { id: renaming.id } }, body: { name } }),
      );
      setStatus(`Renamed to ${d.name}.`);
      setRenaming(undefined);
      await load();
    } catch (err) {
      setError(err);
      setRenaming(undefined);
    }
  }

  async function remove(): Promise<void> {
    if (!removing) return;
    const d = removing;
    setRemoving(undefined);
    try {
      await unwrap(api.DELETE("/v1/webapi/mfa/devices/{id}", { params: { path: { id: d.id } } }));
      setStatus(`Removed ${d.name}.`);
      await load();
    } catch (err) {
      setError(err);
    }
  }

  const columns: Column<Device>[] = [
    { key: "name", header: "Name", render: (d) => <span class="device-name">{d.name}</span> },
    { key: "added", header: "Added", render: (d) => <RelativeTime value={d.added_at} /> },
    {
      key: "used",
      header: "Last used",
      wide: true,
      render: (d) => (d.last_used_at ? <RelativeTime value={d.last_used_at} /> : "never"),
    },
  ];
  if (!enrolOnly) {
    columns.push({
      key: "actions",
      header: <span class="visually-hidden">Actions</span>,
      render: (d) => (
        <span class="row-actions">
          <button
            type="button"
            class="secondary rename"
            aria-label={`Rename ${d.name}`}
            onClick={() => setRenaming(d)}
          >
            Rename
          </button>
          <button
            type="button"
            class="secondary remove"
            aria-label={`Remove ${d.name}`}
            onClick={() => setRemoving(d)}
          >
            Remove
          </button>
        </span>
      ),
    });
  }

  return (
    <Page
      title="Account"
      actions={
        <button id="account-logout" type="button" class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      }
    >
      {session ? (
        <dl class="facts" id="profile">
          <dt>User</dt>
          <dd id="account-user">{session.username}</dd>
          <dt>Roles</dt>
          <dd>{session.roles.join(", ") || "none"}</dd>
          <dt>Session ends</dt>
          <dd>
            <RelativeTime value={session.expires_at} />
          </dd>
        </dl>
      ) : null}

      <h2 id="keys-title">Security keys</h2>
      {enrolOnly && !enrolledNow ? (
        <p id="enrol-notice" class="notice">
          Your roles require a security key. Add one now; then sign in again with it.
        </p>
      ) : null}
      {enrolledNow ? (
        <p id="enrolled" class="notice">
          Your key is registered. Sign in again with it to continue.{" "}
          <button type="button" id="signin-again" onClick={() => void signOut("/web/nodes")}>
            Sign in again
          </button>
        </p>
      ) : null}
      <ErrorBanner error={error} id="account-error" />
      <p id="account-status" class="status" role="status">
        {status}
      </p>
      {devices === undefined ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <Table
          id="devices"
          caption="Your security keys"
          columns={columns}
          rows={devices}
          rowKey={(d) => d.id}
          empty={
            <EmptyState title="No security keys yet">
              <p>A key (or your device's passkey) protects your sign-in beyond the password.</p>
            </EmptyState>
          }
        />
      )}
      {enrolOnly && devices !== undefined && devices.length > 0 ? null : (
        <form id="add-key" class="inline-form" onSubmit={addKey} aria-labelledby="add-key-title">
          <h3 id="add-key-title">Add a security key</h3>
          <label>
            Name for the key
            <input id="device-name" name="device_name" maxLength={64} placeholder="e.g. YubiKey 5" />
          </label>
          <button id="enrol" type="submit" disabled={adding}>
            {adding ? "Touch your key…" : "Add security key"}
          </button>
        </form>
      )}

      <Dialog
        id="rename-dialog"
        open={renaming !== undefined}
        title={`Rename ${renaming?.name ?? ""}`}
        onClose={() => setRenaming(undefined)}
        actions={
          <>
            <button type="button" class="secondary" onClick={() => setRenaming(undefined)}>
              Cancel
            </button>
            <button id="rename-save" type="submit" form="rename-form">
              Save
            </button>
          </>
        }
      >
        {renaming ? (
          <form id="rename-form" onSubmit={rename}>
            <label>
              New name
              <input id="rename-name" name="name" required maxLength={64} value={renaming.name} />
            </label>
          </form>
        ) : null}
      </Dialog>
      <Dialog
        id="remove-dialog"
        open={removing !== undefined}
        title={`Remove ${removing?.name ?? ""}?`}
        onClose={() => setRemoving(undefined)}
        actions={
          <>
            <button type="button" class="secondary" onClick={() => setRemoving(undefined)}>
              Cancel
            </button>
            <button id="remove-confirm" type="button" class="danger" onClick={() => void remove()}>
              Remove
            </button>
          </>
        }
      >
        <p>
          You can no longer sign in with this key. If it is your only one and your roles require MFA, your
          next sign-in asks you to add a key.
        </p>
      </Dialog>
    </Page>
  );
}
