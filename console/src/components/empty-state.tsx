import type { ComponentChildren } from "preact";

/** What an empty list says, and what to do about it. */
export function EmptyState(props: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty-state">
      <p class="empty-title">{props.title}</p>
      {props.children}
    </div>
  );
}
