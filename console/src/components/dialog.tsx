// A modal on the native <dialog>: the browser traps focus, closes on Escape and restores focus.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

export interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** Buttons at the bottom; a Close button is added when absent. */
  actions?: ComponentChildren;
  id?: string;
}

export function Dialog(props: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      id={props.id}
      aria-labelledby={props.id ? `${props.id}-title` : undefined}
      onClose={props.onClose}
    >
      <h2 id={props.id ? `${props.id}-title` : undefined}>{props.title}</h2>
      {props.children}
      <div class="dialog-actions">
        {props.actions ?? (
          <button type="button" class="secondary" onClick={props.onClose}>
            Close
          </button>
        )}
      </div>
    </dialog>
  );
}
