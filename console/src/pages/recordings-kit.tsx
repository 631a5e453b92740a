// What the recordings and audit pages share: offset paging (both routes page by limit/offset and
// answer total_count), a time window picked in the browser's local time, and links to the player.
import type { ComponentChildren } from "preact";

/**
 * A link to a recording's player that loads a new document instead of a client-side route change:
 * the player page is served with its own CSP (WebAssembly allowed, docs/console.md), and a route
 * change would keep the policy of the page the user came from. The router listens for clicks on
 * the window, so stopping the click here leaves the browser's own navigation.
 */
export function PlayerLink(props: { id: string; class?: string; children: ComponentChildren }) {
  return (
    <a
      class={props.class}
      href={`/web/recordings/${encodeURIComponent(props.id)}`}
      onClick={(e) => e.stopPropagation()}
    >
      {props.children}
    </a>
  );
}

/** Page sizes offered; the middle one is the default (not written to the URL). */
export const PAGE_SIZES = [10, 25, 50, 100] as const;

export function pageSizeOf(text: string | undefined): number {
  const n = Number(text);
  return (PAGE_SIZES as readonly number[]).includes(n) ? n : PAGE_SIZES[1];
}

/** A datetime-local value ("2026-11-24T14:05", local time) as RFC 3339, or undefined. */
export function isoOf(local: string | undefined): string | undefined {
  if (!local) return undefined;
  const t = new Date(local);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** The API's start_time/end_time from the page's from/to (to is exclusive, as the API says). */
export function windowQuery(
  from: string | undefined,
  to: string | undefined,
): { start_time?: string; end_time?: string } {
  const start = isoOf(from);
  const end = isoOf(to);
  return { ...(start ? { start_time: start } : {}), ...(end ? { end_time: end } : {}) };
}

export function TimeWindowInputs(props: {
  from: string | undefined;
  to: string | undefined;
  labels: [string, string];
}) {
  return (
    <>
      <label>
        {props.labels[0]}
        <input type="datetime-local" name="from" id="filter-from" defaultValue={props.from ?? ""} />
      </label>
      <label>
        {props.labels[1]}
        <input type="datetime-local" name="to" id="filter-to" defaultValue={props.to ?? ""} />
      </label>
    </>
  );
}

export interface OffsetPagerProps {
  total: number;
  offset: number;
  limit: number;
  label: string;
  onOffset: (offset: number) => void;
  onLimit: (limit: number) => void;
}

/** Previous/Next over limit/offset pages, "21–30 of 95", and the page size. */
export function OffsetPager(props: OffsetPagerProps) {
  const { total, offset, limit } = props;
  const first = total === 0 ? 0 : Math.min(offset + 1, total);
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={props.label}>
      <button
        type="button"
        class="pager-prev secondary"
        disabled={offset <= 0}
        onClick={() => props.onOffset(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span class="pager-page" aria-live="polite">
        {offset >= total && total > 0 ? `past the end of ${total}` : `${first}–${last} of ${total}`}
      </span>
      <button
        type="button"
        class="pager-next secondary"
        disabled={offset + limit >= total}
        onClick={() => props.onOffset(offset + limit)}
      >
        Next
      </button>
      <label class="pager-size">
        Per page
        <select
          class="page-size"
          value={String(limit)}
          onChange={(e) => props.onLimit(Number((e.currentTarget as HTMLSelectElement).value))}
        >
          {PAGE_SIZES.map((n) => (
            <option key={n} value={String(n)}>
              {n}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}
