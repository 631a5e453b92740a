// Key-based paging as the web API does it: each answer's next_key starts the next page. Going
// back needs the keys of the pages before, kept here as a stack.
import { useCallback, useState } from "preact/hooks";

export interface KeyPager {
  /** The start_key of the current page (undefined on the first). */
  startKey: string | undefined;
  /** 1-based page number. */
  page: number;
  next: (nextKey: string) => void;
  prev: () => void;
  /** Back to the first page (after the filters change). */
  reset: () => void;
}

export function useKeyPager(): KeyPager {
  const [keys, setKeys] = useState<string[]>([]);
  const next = useCallback((nextKey: string) => setKeys((k) => [...k, nextKey]), []);
  const prev = useCallback(() => setKeys((k) => k.slice(0, -1)), []);
  const reset = useCallback(() => setKeys([]), []);
  return { startKey: keys.at(-1), page: keys.length + 1, next, prev, reset };
}

export interface PagerProps {
  page: number;
  /** The answer's next_key; absent on the last page. */
  nextKey: string | undefined;
  onPrev: () => void;
  onNext: (nextKey: string) => void;
  label?: string;
}

export function Pager(props: PagerProps) {
  const { nextKey } = props;
  return (
    <nav class="pager" aria-label={props.label ?? "Pages"}>
      <button type="button" class="pager-prev" disabled={props.page <= 1} onClick={props.onPrev}>
        Previous
      </button>
      <span class="pager-page" aria-live="polite">
        Page {props.page}
      </span>
      <button
        type="button"
        class="pager-next"
        disabled={nextKey === undefined || nextKey === ""}
        onClick={() => nextKey && props.onNext(nextKey)}
      >
        Next
      </button>
    </nav>
  );
}
