// Pieces the admin pages (users, roles, join tokens, bots) share: where a resource is managed, a
// list loaded from one GET with a reload, a one-time secret shown with a copy button, and a
// confirmation before a destructive action.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { describeError } from "../api/client.ts";
import { CopyButton } from "../components/copy-button.tsx";
import { Dialog } from "../components/dialog.tsx";

export type ManagedBy = "api" | "kubernetes" | "folder";

const MANAGED_TEXT: Record<ManagedBy, string> = {
  api: "managed here",
  kubernetes: "managed in Kubernetes",
  folder: "managed in the manifests folder",
};

/** Where a user or role comes from; only "api" ones are changed from the console. */
export function ManagedBadge(props: { managedBy: ManagedBy }) {
  return (
    <span class={`badge managed-${props.managedBy}`} data-managed-by={props.managedBy}>
      {MANAGED_TEXT[props.managedBy]}
    </span>
  );
}

/** One GET's items, with loading, error and reload. */
export function useList<T>(load: () => Promise<{ items: T[] }>): {
  items: T[] | undefined;
  error: unknown;
  reload: () => void;
} {
  const [items, setItems] = useState<T[] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    load()
      .then((r) => {
        if (!live) return;
        setItems(r.items);
        setError(undefined);
      })
      .catch((e: unknown) => live && setError(e));
    return () => {
      live = false;
    };
  }, [generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { items, error, reload };
}

/** A secret shown once (a reset link, a join command): read-only, selectable, with Copy. */
export function OneTimeSecret(props: {
  id: string;
  label: string;
  copyLabel: string;
  value: string;
  multiline?: boolean;
}) {
  return (
    <div class="one-time-secret">
      <label for={props.id}>{props.label}</label>
      {props.multiline ? (
        <textarea id={props.id} readOnly rows={4} class="mono" value={props.value} />
      ) : (
        <input id={props.id} readOnly class="mono" value={props.value} />
      )}
      <CopyButton text={props.value} label={props.copyLabel} />
    </div>
  );
}

/** "Are you sure?" with the consequence spelled out; the action's errors stay in the dialog. */
export function ConfirmDialog(props: {
  id: string;
  open: boolean;
  title: string;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const confirm = async (): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await props.onConfirm();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      id={props.id}
      open={props.open}
      title={props.title}
      onClose={() => {
        setError(undefined);
        props.onClose();
      }}
      actions={
        <>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="button" class="danger" id={`${props.id}-confirm`} disabled={busy} onClick={confirm}>
            {props.confirmLabel}
          </button>
        </>
      }
    >
      {props.children}
      {error ? (
        <p class="error" role="alert">
          {describeError(error)}
        </p>
      ) : null}
    </Dialog>
  );
}
