// Filters live in the page's query string, so a filtered view can be reloaded, shared and
// reached with the back button.
import type { ComponentChildren } from "preact";
import { useCallback } from "preact/hooks";
import { useLocation } from "preact-iso";

/** The page's query parameters and a way to replace some of them (empty values are dropped). */
export function useQueryParams(): [
  Record<string, string>,
  (changes: Record<string, string | undefined>) => void,
] {
  const { path, query, route } = useLocation();
  const set = useCallback(
    (changes: Record<string, string | undefined>) => {
      const next = new URLSearchParams();
      for (const [k, v] of Object.entries({ ...query, ...changes })) if (v) next.set(k, v);
      const qs = next.toString();
      route(qs ? `${path}?${qs}` : path, true);
    },
    [path, query, route],
  );
  return [query, set];
}

export interface FilterBarProps {
  /** Called with the form's named fields when the user applies the filters. */
  onApply: (values: Record<string, string>) => void;
  onClear?: () => void;
  label?: string;
  children: ComponentChildren;
}

/** A form of labelled filter inputs (named by their `name`), applied with Enter or the button. */
export function FilterBar(props: FilterBarProps) {
  const submit = (event: SubmitEvent): void => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const values: Record<string, string> = {};
    for (const [k, v] of new FormData(form)) if (typeof v === "string") values[k] = v.trim();
    props.onApply(values);
  };
  return (
    <search>
      <form class="filter-bar" aria-label={props.label ?? "Filters"} onSubmit={submit}>
        {props.children}
        <div class="filter-actions">
          <button type="submit">Apply</button>
          {props.onClear ? (
            <button type="reset" class="secondary" onClick={props.onClear}>
              Clear
            </button>
          ) : null}
        </div>
      </form>
    </search>
  );
}
